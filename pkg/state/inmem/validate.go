package inmem

import (
	"reflect"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// isNil reports whether v holds a typed nil (pointer, map, slice...), whose
// methods would typically panic.
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
// resource (rule R3).
func checkPointer(ptr resource.Pointer) error {
	_, _, _, err := identity(ptr)
	return err
}

// identity returns the namespace, type and ID ptr names, or an invalid
// error when ptr is nil or one of them is empty (rule R3).
func identity(ptr resource.Pointer) (ns resource.Namespace, typ resource.Type, id resource.ID, err error) {
	if md, ok := ptr.(*resource.Metadata); ok && md != nil {
		ns, typ, id = md.Namespace(), md.Type(), md.ID()
	} else {
		if ptr == nil || isNil(ptr) {
			return "", "", "", state.NewInvalidError(nil, "nil resource pointer")
		}
		ns, typ, id = ptr.Namespace(), ptr.Type(), ptr.ID()
	}
	if ns == "" || typ == "" || id == "" {
		return "", "", "", state.NewInvalidError(resource.PointerOf(ptr), "%w", resource.ValidatePointer(ptr))
	}
	return ns, typ, id, nil
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
	if md.Namespace() == "" || md.Type() == "" || md.ID() == "" {
		return nil, state.NewInvalidError(resource.PointerOf(md), "%w", resource.ValidatePointer(md))
	}
	if p := md.Phase(); p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return nil, state.NewInvalidError(resource.PointerOf(md), "unknown phase %s", p)
	}
	return md, nil
}
