package runtime

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
)

// IsAccessDeniedError reports whether err is (or wraps) the error of an
// access the engine refused to a controller (rules C3–C5); it is
// [controller.IsAccessDeniedError], kept here for callers of this package.
func IsAccessDeniedError(err error) bool { return controller.IsAccessDeniedError(err) }

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

// accessSet is the immutable access scope of one controller, rebuilt when
// its dynamic inputs change.
type accessSet struct {
	// reads: declared inputs (static and dynamic), by kind.
	reads map[dependency.Key]*idScope
	// finalizers: strong inputs and QController primary inputs, by kind.
	finalizers map[dependency.Key]*idScope
	// outputs: declared output types, in any namespace.
	outputs map[resource.Type]controller.OutputKind
}

func newAccessSet(static, dynamic []controller.Input, outputs []controller.Output) *accessSet {
	a := &accessSet{
		reads:      map[dependency.Key]*idScope{},
		finalizers: map[dependency.Key]*idScope{},
		outputs:    make(map[resource.Type]controller.OutputKind, len(outputs)),
	}
	for _, list := range [][]controller.Input{static, dynamic} {
		for _, in := range list {
			k := dependency.Key{Namespace: in.Namespace, Type: in.Type}
			scopeOf(a.reads, k).add(in)
			if in.Kind == controller.InputStrong || in.Kind == controller.InputQPrimary {
				scopeOf(a.finalizers, k).add(in)
			}
		}
	}
	for _, out := range outputs {
		a.outputs[out.Type] = out.Kind
	}
	return a
}

func scopeOf(m map[dependency.Key]*idScope, k dependency.Key) *idScope {
	s := m[k]
	if s == nil {
		s = &idScope{}
		m[k] = s
	}
	return s
}

// isOutput reports whether typ is a declared output type.
func (a *accessSet) isOutput(typ resource.Type) bool {
	_, ok := a.outputs[typ]
	return ok
}

// canRead reports whether the resource ptr may be read: a declared input
// covering its ID, or a declared output type.
func (a *accessSet) canRead(ptr resource.Pointer) bool {
	if a.isOutput(ptr.Type()) {
		return true
	}
	s := a.reads[dependency.Key{Namespace: ptr.Namespace(), Type: ptr.Type()}]
	return s != nil && s.covers(ptr.ID())
}

// canList reports whether the kind may be listed: a declared input without
// an ID, or a declared output type.
func (a *accessSet) canList(k resource.Kind) bool {
	if a.isOutput(k.Type()) {
		return true
	}
	s := a.reads[dependency.Key{Namespace: k.Namespace(), Type: k.Type()}]
	return s != nil && s.all
}

// finalizerInput reports whether ptr is a strong or primary input, whose
// finalizers the controller may change.
func (a *accessSet) finalizerInput(ptr resource.Pointer) bool {
	s := a.finalizers[dependency.Key{Namespace: ptr.Namespace(), Type: ptr.Type()}]
	return s != nil && s.covers(ptr.ID())
}
