package etcd

import (
	"reflect"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// isNil reports whether v holds a typed nil (pointer, map, slice...).
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Interface, reflect.Chan:
		return rv.IsNil()
	default:
		return false
	}
}

// checkPointer returns an invalid error when ptr is nil or names no
// resource (rule R3), and the pointer as a value otherwise.
func checkPointer(ptr resource.Pointer) (resource.Pointer, error) {
	if ptr == nil || isNil(ptr) {
		return nil, state.NewInvalidError(nil, "nil resource pointer")
	}
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, state.NewInvalidError(resource.PointerOf(ptr), "%w", err)
	}
	return resource.PointerOf(ptr), nil
}

// checkKind returns an invalid error when k is nil or names no kind.
func checkKind(k resource.Kind) error {
	if k == nil || isNil(k) {
		return state.NewInvalidError(nil, "nil resource kind")
	}
	if err := resource.ValidateKind(k); err != nil {
		return state.NewInvalidError(nil, "%w", err)
	}
	return nil
}

// checkResource returns the metadata of r, or an invalid error when r is
// nil, has no metadata, names no resource or has an unknown phase.
func checkResource(r resource.Resource) (*resource.Metadata, error) {
	if r == nil || isNil(r) {
		return nil, state.NewInvalidError(nil, "nil resource")
	}
	md := r.Metadata()
	if md == nil {
		return nil, state.NewInvalidError(nil, "resource %T with nil metadata", r)
	}
	if err := resource.ValidatePointer(md); err != nil {
		return nil, state.NewInvalidError(resource.PointerOf(md), "%w", err)
	}
	if p := md.Phase(); p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return nil, state.NewInvalidError(resource.PointerOf(md), "unknown phase %s", p)
	}
	return md, nil
}

// kindString formats a kind that may be invalid for an error message.
func kindString(k resource.Kind) string {
	if checkKind(k) != nil {
		return "<invalid kind>"
	}
	return resource.KindString(k)
}
