package boltdb_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// The types of the reproduction of issue 18 (rule Q4): parents, the
// children that name their parent by a label, and each parent's status
// (how many children name it), kept by a qtransform.

type (
	familySpec     struct{ N int }
	parentDef      struct{}
	childDef       struct{}
	parentStateDef struct{}
	parentRes      = typed.Resource[familySpec, parentDef]
	childRes       = typed.Resource[familySpec, childDef]
	parentState    = typed.Resource[familySpec, parentStateDef]
)

func (parentDef) Definition() typed.Definition {
	return typed.Definition{Type: "Parents.test.resgraph.dev", DefaultNamespace: testNS}
}

func (childDef) Definition() typed.Definition {
	return typed.Definition{Type: "Children.test.resgraph.dev", DefaultNamespace: testNS}
}

func (parentStateDef) Definition() typed.Definition {
	return typed.Definition{Type: "ParentStates.test.resgraph.dev", DefaultNamespace: testNS}
}

// familyRegistry knows the family's types.
func familyRegistry() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[familySpec, parentDef](reg)
	codec.MustRegister[familySpec, childDef](reg)
	codec.MustRegister[familySpec, parentStateDef](reg)
	return reg
}

// familyMapper maps a child to the parent its label names, recording the
// label it saw ("destroyed:" prefixed for a destroyed child).
type familyMapper struct {
	mu   sync.Mutex
	seen []string
}

func (m *familyMapper) mapper(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, c *childRes) ([]resource.Pointer, error) {
	parent, _ := c.Metadata().Labels().Get("parent")
	what := parent
	if qtransform.InputDestroyed(ctx) {
		what = "destroyed:" + parent
	}
	m.mu.Lock()
	m.seen = append(m.seen, c.Metadata().ID()+"="+what)
	m.mu.Unlock()
	if parent == "" {
		return nil, nil
	}
	return []resource.Pointer{typed.Pointer[*parentRes](parent)}, nil
}

func (m *familyMapper) calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// familyController keeps, for each parent, the number of children whose
// label names it.
func familyController(m *familyMapper) *qtransform.QController[*parentRes, *parentState] {
	return qtransform.NewQController(qtransform.Settings[*parentRes, *parentState]{
		Name: "Families",
		MapMetadataFunc: func(p *parentRes) *parentState {
			return typed.NewDefault[familySpec, parentStateDef](p.Metadata().ID(), familySpec{})
		},
		TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, p *parentRes, s *parentState) error {
			children, err := safe.ReaderList[*childRes](ctx, r, typed.Kind[*childRes](),
				state.WithLabelQuery(resource.LabelEqual("parent", p.Metadata().ID())))
			if err != nil {
				return err
			}
			s.TypedSpec().N = children.Len()
			return nil
		},
	}, qtransform.WithExtraMappedInput(m.mapper))
}

func hasChildren(n int) func(*parentState) bool {
	return func(s *parentState) bool { return s.TypedSpec().N == n }
}

// TestQ4_DestroyedChildKeepsItsLabelsAcrossARestart is the reproduction of
// issue 18 on a persistent state, with a restart in the middle: a child
// labelled parent=p1 is created under one engine; the state is closed and
// reopened (the child comes back from the file) under a new engine, and
// the child is destroyed: the mapper sees "p1" every time, the last as
// destroyed, and the parent's status drops the child.
func TestQ4_DestroyedChildKeepsItsLabelsAcrossARestart(t *testing.T) {
	path := dbPath(t)
	st, err := boltdb.Open(path, familyRegistry())
	require.NoError(t, err)
	m := &familyMapper{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(familyController(m)))
	runtimetest.Create(t, st, typed.NewDefault[familySpec, parentDef]("p1", familySpec{}))
	c1 := typed.NewDefault[familySpec, childDef]("c1", familySpec{})
	c1.Metadata().Labels().Set("parent", "p1")
	runtimetest.Create(t, st, c1)
	runtimetest.Await(t, st, "p1", hasChildren(1))
	e.Settle(t)
	require.NoError(t, e.Stop())
	require.NoError(t, st.Close())

	st, err = boltdb.Open(path, familyRegistry())
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	e = runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(familyController(m)))
	e.Settle(t)
	require.NoError(t, st.Destroy(context.Background(), typed.Pointer[*childRes]("c1")))
	runtimetest.Await(t, st, "p1", hasChildren(0))
	e.Settle(t)
	assert.Equal(t, []string{"c1=p1", "c1=p1", "c1=destroyed:p1"}, m.calls(),
		"the mapper sees the parent label of the child restored from the file, and of its destruction")
}
