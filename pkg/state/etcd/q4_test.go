package etcd_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// The types of the reproduction of issue 18 (rule Q4): parents, the
// children that name their parent by a label, and each parent's status
// (how many children name it), kept by a qtransform.

const familyNS resource.Namespace = "family"

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
	return typed.Definition{Type: "Parents.test.resgraph.dev", DefaultNamespace: familyNS}
}

func (childDef) Definition() typed.Definition {
	return typed.Definition{Type: "Children.test.resgraph.dev", DefaultNamespace: familyNS}
}

func (parentStateDef) Definition() typed.Definition {
	return typed.Definition{Type: "ParentStates.test.resgraph.dev", DefaultNamespace: familyNS}
}

// registerFamily registers the family's types.
func registerFamily(reg *codec.Registry) {
	codec.MustRegister[familySpec, parentDef](reg)
	codec.MustRegister[familySpec, childDef](reg)
	codec.MustRegister[familySpec, parentStateDef](reg)
}

// familyMapper maps a child to the parent its label names, recording the
// label it saw ("destroyed:" prefixed for a destroyed child); gate, when
// set, holds its calls.
type familyMapper struct {
	gate chan struct{}

	mu   sync.Mutex
	seen []string
}

func (m *familyMapper) mapper(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, c *childRes) ([]resource.Pointer, error) {
	if m.gate != nil {
		select {
		case <-m.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
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

func newChild(id, parent string) *childRes {
	c := typed.NewDefault[familySpec, childDef](id, familySpec{})
	if parent != "" {
		c.Metadata().Labels().Set("parent", parent)
	}
	return c
}

// familyStates returns two states on the same fresh prefix: the engine's,
// and another process's, whose destroys reach the engine as etcd deletes.
func familyStates(t *testing.T) (engine, other state.State) {
	t.Helper()
	prefix := newPrefix()
	open := func() state.State {
		st, err := etcd.New(context.Background(), client, registry(), etcd.WithPrefix(prefix), etcd.WithLogger(zaptest.NewLogger(t)))
		require.NoError(t, err)
		return st
	}
	return open(), open()
}

func hasChildren(n int) func(*parentState) bool {
	return func(s *parentState) bool { return s.TypedSpec().N == n }
}

// TestQ4_DestroyedChildKeepsItsLabels is the reproduction of issue 18 on
// etcd: a qtransform over parents with children as an extra mapped input
// whose mapper reads the child's "parent" label. A child labelled p1 is
// created, then destroyed by another process (an etcd delete, which
// carries no value: the state hands the engine the value it held): the
// mapper sees "p1" both times, and the parent's status drops the child.
func TestQ4_DestroyedChildKeepsItsLabels(t *testing.T) {
	st, other := familyStates(t)
	m := &familyMapper{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(familyController(m)))
	runtimetest.Create(t, st, typed.NewDefault[familySpec, parentDef]("p1", familySpec{}))
	runtimetest.Await(t, st, "p1", hasChildren(0))

	runtimetest.Create(t, other, newChild("c1", "p1"))
	runtimetest.Await(t, st, "p1", hasChildren(1))
	e.Settle(t)
	require.NoError(t, other.Destroy(context.Background(), typed.Pointer[*childRes]("c1")))
	runtimetest.Await(t, st, "p1", hasChildren(0))
	e.Settle(t)
	assert.Equal(t, []string{"c1=p1", "c1=destroyed:p1"}, m.calls(), "the mapper sees the parent label of a destroyed child")
}

// TestQ4_CoalescedChildBurst: on etcd, a child created unlabelled,
// labelled p1 and destroyed while the mapper is busy with another child is
// mapped once, as destroyed, with the label of its last stored version.
func TestQ4_CoalescedChildBurst(t *testing.T) {
	st, other := familyStates(t)
	m := &familyMapper{gate: make(chan struct{})}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithQControllers(familyController(m)))
	ctx := context.Background()
	for _, id := range []string{"p1", "p2"} {
		runtimetest.Create(t, st, typed.NewDefault[familySpec, parentDef](id, familySpec{}))
	}
	runtimetest.Await(t, st, "p2", hasChildren(0))

	runtimetest.Create(t, other, newChild("blocker", "p2")) // its call holds the only worker
	runtimetest.Create(t, other, newChild("c1", ""))
	require.NoError(t, other.Modify(ctx, newChild("c1", ""), func(r resource.Resource) error {
		r.Metadata().Labels().Set("parent", "p1")
		return nil
	}))
	require.NoError(t, other.Destroy(ctx, typed.Pointer[*childRes]("c1")))
	// Every change routed: c1's one item waits behind the held blocker.
	wctx, cancel := context.WithTimeout(ctx, runtimetest.DefaultTimeout)
	defer cancel()
	_, err := runtimetest.WaitIdle(wctx, e.Runtime, "Families")
	require.NoError(t, err)
	release := func(what string) {
		t.Helper()
		select {
		case m.gate <- struct{}{}:
		case <-time.After(runtimetest.DefaultTimeout):
			require.FailNow(t, "no mapper call waits", "for %s; calls: %v", what, m.calls())
		}
	}
	release("blocker")
	release("c1")
	close(m.gate)
	e.Settle(t)
	assert.Equal(t, []string{"blocker=p2", "c1=destroyed:p1"}, m.calls(),
		"one call for the coalesced changes, as destroyed, with the last label")
}
