package typed

import (
	"reflect"
	"sync"
)

// SpecMethods are how spec values of one Go type are copied, compared and
// measured, given by a package that knows the type better than
// reflection: package codec/protobuf gives them for protobuf messages
// (proto.Clone, proto.Equal, proto.Size), so that a spec that is a
// generated message needs no hand-written code. Each function receives
// and returns values of the spec type (as any).
type SpecMethods struct {
	// Copy returns a deep copy of a spec (rule R2).
	Copy func(spec any) any
	// Equal reports whether two specs are equal (rule R1); it also serves
	// as Identical's comparison of the spec, so it must see every change
	// a holder of a shared snapshot could make.
	Equal func(a, b any) bool
	// Size estimates the bytes a spec refers to (for ApproxSize); nil
	// means a reflective walk.
	Size func(spec any) int
}

// specHooks are the functions RegisterSpecMethods installed.
var specHooks struct {
	mu    sync.RWMutex
	match []func(reflect.Type) (SpecMethods, bool)
}

// RegisterSpecMethods installs match, which gives the SpecMethods of the
// spec types it knows. When a spec type's plan is made (once per type, on
// first use), a DeepCopy method of the spec or vtprotobuf's
// CloneVT/EqualVT methods win; otherwise the first hook that matches
// gives the copy and the equality, before deepcopy-gen's methods and the
// reflective plan. Install hooks at package initialization: a type whose
// plan was made before keeps it.
func RegisterSpecMethods(match func(t reflect.Type) (SpecMethods, bool)) {
	if match == nil {
		return
	}
	specHooks.mu.Lock()
	defer specHooks.mu.Unlock()
	specHooks.match = append(specHooks.match, match)
}

// hookedMethods returns the SpecMethods a hook gives for t.
func hookedMethods(t reflect.Type) (SpecMethods, bool) {
	specHooks.mu.RLock()
	defer specHooks.mu.RUnlock()
	for _, m := range specHooks.match {
		if sm, ok := m(t); ok && sm.Copy != nil && sm.Equal != nil {
			return sm, true
		}
	}
	return SpecMethods{}, false
}
