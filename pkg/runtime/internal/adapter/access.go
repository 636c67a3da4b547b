package adapter

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// idScope is which IDs of a kind an access rule covers: all of them, or the
// listed ones.
type idScope struct {
	ids map[resource.ID]struct{}
	all bool
}

func (s *idScope) add(in controller.Input) {
	if id, ok := in.ID.Get(); ok {
		if s.ids == nil {
			s.ids = map[resource.ID]struct{}{}
		}
		s.ids[id] = struct{}{}
		return
	}
	s.all = true
}

func (s *idScope) covers(id resource.ID) bool {
	if s.all {
		return true
	}
	_, ok := s.ids[id]
	return ok
}

// Access is the access scope of one controller (rules C3–C5): what it may
// read, list, write and put finalizers on. It is immutable: the Runtime
// builds a new one when the controller's dynamic inputs change.
type Access struct {
	// reads: declared inputs (static and dynamic), by kind.
	reads scopes
	// finalizers: strong inputs and QController primary inputs, by kind.
	finalizers scopes
	// uncached: inputs declared Uncached, by kind (empty without any).
	uncached scopes
	// outputs: declared output types, in any namespace.
	outputs outputTypes
}

// NewAccess returns the scope of a controller that declared the inputs
// static and dynamic and the outputs.
func NewAccess(static, dynamic []controller.Input, outputs []controller.Output) *Access {
	a := &Access{}
	for _, list := range [][]controller.Input{static, dynamic} {
		for _, in := range list {
			k := resource.KindOf(resource.NewKind(in.Namespace, in.Type))
			a.reads.of(k).add(in)
			if in.Kind == controller.InputStrong || in.Kind == controller.InputQPrimary {
				a.finalizers.of(k).add(in)
			}
			if in.Uncached {
				a.uncached.of(k).add(in)
			}
		}
	}
	for _, out := range outputs {
		a.outputs.add(out.Type)
	}
	return a
}

// fewKinds is how many kinds (or output types) a scope finds by comparing
// them with each: a controller declares few, and a comparison of interned
// names costs less than a hash of them. Past it, a map finds them.
const fewKinds = 8

// scopes maps kinds to their idScope. Its zero value is empty.
type scopes struct {
	few  []kindScope                   // while at most fewKinds
	many map[resource.KindKey]*idScope // past fewKinds (few is then nil)
}

type kindScope struct {
	kind  resource.KindKey
	scope *idScope
}

// get returns the scope of k (nil: none).
func (m *scopes) get(k resource.KindKey) *idScope {
	if m.many != nil {
		return m.many[k]
	}
	for i := range m.few {
		if m.few[i].kind == k {
			return m.few[i].scope
		}
	}
	return nil
}

// of returns the scope of k, adding an empty one when k has none.
func (m *scopes) of(k resource.KindKey) *idScope {
	if s := m.get(k); s != nil {
		return s
	}
	s := &idScope{}
	switch {
	case m.many != nil:
		m.many[k] = s
	case len(m.few) < fewKinds:
		m.few = append(m.few, kindScope{kind: k, scope: s})
	default:
		m.many = make(map[resource.KindKey]*idScope, len(m.few)+1)
		for _, e := range m.few {
			m.many[e.kind] = e.scope
		}
		m.many[k], m.few = s, nil
	}
	return s
}

// outputTypes is a set of output types. Its zero value is empty.
type outputTypes struct {
	few  []resource.Type            // while at most fewKinds
	many map[resource.Type]struct{} // past fewKinds (few is then nil)
}

func (o *outputTypes) add(typ resource.Type) {
	switch {
	case o.has(typ):
	case o.many != nil:
		o.many[typ] = struct{}{}
	case len(o.few) < fewKinds:
		o.few = append(o.few, typ)
	default:
		o.many = make(map[resource.Type]struct{}, len(o.few)+1)
		for _, t := range o.few {
			o.many[t] = struct{}{}
		}
		o.many[typ], o.few = struct{}{}, nil
	}
}

func (o *outputTypes) has(typ resource.Type) bool {
	if o.many != nil {
		_, ok := o.many[typ]
		return ok
	}
	for _, t := range o.few {
		if t == typ {
			return true
		}
	}
	return false
}

// isOutput reports whether typ is a declared output type.
func (a *Access) isOutput(typ resource.Type) bool { return a.outputs.has(typ) }

// canRead reports whether the resource ptr may be read: a declared input
// covering its ID, or a declared output type.
func (a *Access) canRead(ptr resource.Pointer) bool {
	if a.isOutput(ptr.Type()) {
		return true
	}
	s := a.reads.get(resource.KindOf(ptr))
	return s != nil && s.covers(ptr.ID())
}

// canList reports whether the kind may be listed: a declared input without
// an ID, or a declared output type.
func (a *Access) canList(k resource.Kind) bool {
	if a.isOutput(k.Type()) {
		return true
	}
	s := a.reads.get(resource.KindOf(k))
	return s != nil && s.all
}

// finalizerInput reports whether ptr is a strong or primary input, whose
// finalizers the controller may change.
func (a *Access) finalizerInput(ptr resource.Pointer) bool {
	s := a.finalizers.get(resource.KindOf(ptr))
	return s != nil && s.covers(ptr.ID())
}

// canReadUncached reports whether ptr is covered by an input declared
// Uncached (controller.UncachedReader).
func (a *Access) canReadUncached(ptr resource.Pointer) bool {
	s := a.uncached.get(resource.KindOf(ptr))
	return s != nil && s.covers(ptr.ID())
}

// canListUncached reports whether the kind is an input declared Uncached
// without an ID.
func (a *Access) canListUncached(k resource.Kind) bool {
	s := a.uncached.get(resource.KindOf(k))
	return s != nil && s.all
}
