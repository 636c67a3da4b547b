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
	reads map[resource.KindKey]*idScope
	// finalizers: strong inputs and QController primary inputs, by kind.
	finalizers map[resource.KindKey]*idScope
	// uncached: inputs declared Uncached, by kind (nil without any).
	uncached map[resource.KindKey]*idScope
	// outputs: declared output types, in any namespace.
	outputs map[resource.Type]controller.OutputKind
}

// NewAccess returns the scope of a controller that declared the inputs
// static and dynamic and the outputs.
func NewAccess(static, dynamic []controller.Input, outputs []controller.Output) *Access {
	a := &Access{
		reads:      map[resource.KindKey]*idScope{},
		finalizers: map[resource.KindKey]*idScope{},
		outputs:    make(map[resource.Type]controller.OutputKind, len(outputs)),
	}
	for _, list := range [][]controller.Input{static, dynamic} {
		for _, in := range list {
			k := resource.KindOf(resource.NewKind(in.Namespace, in.Type))
			scopeOf(a.reads, k).add(in)
			if in.Kind == controller.InputStrong || in.Kind == controller.InputQPrimary {
				scopeOf(a.finalizers, k).add(in)
			}
			if in.Uncached {
				if a.uncached == nil {
					a.uncached = map[resource.KindKey]*idScope{}
				}
				scopeOf(a.uncached, k).add(in)
			}
		}
	}
	for _, out := range outputs {
		a.outputs[out.Type] = out.Kind
	}
	return a
}

func scopeOf(m map[resource.KindKey]*idScope, k resource.KindKey) *idScope {
	s := m[k]
	if s == nil {
		s = &idScope{}
		m[k] = s
	}
	return s
}

// isOutput reports whether typ is a declared output type.
func (a *Access) isOutput(typ resource.Type) bool {
	_, ok := a.outputs[typ]
	return ok
}

// canRead reports whether the resource ptr may be read: a declared input
// covering its ID, or a declared output type.
func (a *Access) canRead(ptr resource.Pointer) bool {
	if a.isOutput(ptr.Type()) {
		return true
	}
	s := a.reads[resource.KindOf(ptr)]
	return s != nil && s.covers(ptr.ID())
}

// canList reports whether the kind may be listed: a declared input without
// an ID, or a declared output type.
func (a *Access) canList(k resource.Kind) bool {
	if a.isOutput(k.Type()) {
		return true
	}
	s := a.reads[resource.KindOf(k)]
	return s != nil && s.all
}

// finalizerInput reports whether ptr is a strong or primary input, whose
// finalizers the controller may change.
func (a *Access) finalizerInput(ptr resource.Pointer) bool {
	s := a.finalizers[resource.KindOf(ptr)]
	return s != nil && s.covers(ptr.ID())
}

// canReadUncached reports whether ptr is covered by an input declared
// Uncached (controller.UncachedReader).
func (a *Access) canReadUncached(ptr resource.Pointer) bool {
	s := a.uncached[resource.KindOf(ptr)]
	return s != nil && s.covers(ptr.ID())
}

// canListUncached reports whether the kind is an input declared Uncached
// without an ID.
func (a *Access) canListUncached(k resource.Kind) bool {
	s := a.uncached[resource.KindOf(k)]
	return s != nil && s.all
}
