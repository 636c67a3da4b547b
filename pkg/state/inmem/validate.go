package inmem

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// key returns the comparable pointer ptr names, or the error of
// [resource.ValidatePointer] (invalid class) when ptr is nil or its
// namespace, type or ID is empty (rule R3). A PointerKey (what
// [resource.NewPointer] returns) with all three set is the key itself
// (see keyOf), without the type switches of ValidatePointer and
// PointerOf.
func key(ptr resource.Pointer) (resource.PointerKey, error) {
	if p, ok := keyOf(ptr); ok {
		return p, nil
	}
	if err := resource.ValidatePointer(ptr); err != nil {
		return resource.PointerKey{}, err
	}
	return resource.PointerOf(ptr), nil
}

// keyOf returns ptr when it is a PointerKey with its namespace, type and
// ID set, and false otherwise (see key). It is inlined: a Get checks it
// before calling key.
func keyOf(ptr resource.Pointer) (resource.PointerKey, bool) {
	p, ok := ptr.(resource.PointerKey)
	return p, ok && p.Namespace() != "" && p.Type() != "" && p.ID() != ""
}
