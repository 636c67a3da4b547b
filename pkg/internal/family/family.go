// Package family is the fixture of the reproduction of issue 18 (rule Q4)
// that the backends' tests share: parents, children that name their
// parent by a label, and each parent's status (how many children name
// it), kept by a qtransform whose extra mapped input maps a child to the
// parent its label names — so that a child's destruction reaches the
// parent only when the mapper sees the destroyed child's last labels.
package family

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// Namespace is the namespace of the family's resources.
const Namespace resource.Namespace = "family"

type (
	// Spec is the spec of every type of the family: a parent's status
	// counts its children in N.
	Spec      struct{ N int }
	ParentDef struct{}
	ChildDef  struct{}
	StateDef  struct{}
	Parent    = typed.Resource[Spec, ParentDef]
	Child     = typed.Resource[Spec, ChildDef]
	State     = typed.Resource[Spec, StateDef]
)

func (ParentDef) Definition() typed.Definition {
	return typed.Definition{Type: "Parents.test.resgraph.dev", DefaultNamespace: Namespace}
}

func (ChildDef) Definition() typed.Definition {
	return typed.Definition{Type: "Children.test.resgraph.dev", DefaultNamespace: Namespace}
}

func (StateDef) Definition() typed.Definition {
	return typed.Definition{Type: "ParentStates.test.resgraph.dev", DefaultNamespace: Namespace}
}

// Register registers the family's types in reg.
func Register(reg *codec.Registry) {
	codec.MustRegister[Spec, ParentDef](reg)
	codec.MustRegister[Spec, ChildDef](reg)
	codec.MustRegister[Spec, StateDef](reg)
}

// NewParent returns a parent.
func NewParent(id resource.ID) *Parent {
	return typed.NewDefault[Spec, ParentDef](id, Spec{})
}

// NewChild returns a child whose label names parent ("": no label).
func NewChild(id resource.ID, parent string) *Child {
	c := typed.NewDefault[Spec, ChildDef](id, Spec{})
	if parent != "" {
		c.Metadata().Labels().Set("parent", parent)
	}
	return c
}

// Mapper maps a child of type C to the resource of kind Parent (a
// *Parent when nil) that its "parent" label names, recording the label it
// saw ("destroyed:" prefixed for a destroyed child's last version,
// "previous:" for a child's previous version); Gate, when set, holds
// its calls until it receives.
type Mapper[C resource.Resource] struct {
	Gate   chan struct{}
	Parent resource.Kind

	mu   sync.Mutex
	seen []string
}

// Map is the qtransform extra mapped input's mapper.
func (m *Mapper[C]) Map(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, c C) ([]resource.Pointer, error) {
	if m.Gate != nil {
		select {
		case <-m.Gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	parent, _ := c.Metadata().Labels().Get("parent")
	what := parent
	switch {
	case qtransform.InputPrevious(ctx):
		what = "previous:" + parent
	case qtransform.InputDestroyed(ctx):
		what = "destroyed:" + parent
	}
	m.mu.Lock()
	m.seen = append(m.seen, c.Metadata().ID()+"="+what)
	m.mu.Unlock()
	if parent == "" {
		return nil, nil
	}
	kind := m.Parent
	if kind == nil {
		kind = typed.Kind[*Parent]()
	}
	return []resource.Pointer{resource.NewPointer(kind.Namespace(), kind.Type(), parent)}, nil
}

// Calls returns what the mapper saw, call by call: "child=parent".
func (m *Mapper[C]) Calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.seen...)
}

// Controller keeps, for each parent, the number of children whose label
// names it, its children mapped by m.
func Controller(m *Mapper[*Child]) *qtransform.QController[*Parent, *State] {
	return qtransform.NewQController(qtransform.Settings[*Parent, *State]{
		Name: "Families",
		MapMetadataFunc: func(p *Parent) *State {
			return typed.NewDefault[Spec, StateDef](p.Metadata().ID(), Spec{})
		},
		TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, p *Parent, s *State) error {
			children, err := safe.ReaderList[*Child](ctx, r, typed.Kind[*Child](),
				state.WithLabelQuery(resource.LabelEqual("parent", p.Metadata().ID())))
			if err != nil {
				return err
			}
			s.TypedSpec().N = children.Len()
			return nil
		},
	}, qtransform.WithExtraMappedInput(m.Map))
}

// HasChildren is a condition on a parent's status: it counts n children.
func HasChildren(n int) func(*State) bool {
	return func(s *State) bool { return s.TypedSpec().N == n }
}
