package inmem

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// key returns the comparable pointer ptr names, or the error of
// [resource.ValidatePointer] (invalid class) when ptr is nil or its
// namespace, type or ID is empty (rule R3). A PointerKey (what
// [resource.NewPointer] returns) with all three set is the key itself,
// without the type switches of ValidatePointer and PointerOf.
func key(ptr resource.Pointer) (resource.PointerKey, error) {
	if p, ok := ptr.(resource.PointerKey); ok && p.Namespace() != "" && p.Type() != "" && p.ID() != "" {
		return p, nil
	}
	if err := resource.ValidatePointer(ptr); err != nil {
		return resource.PointerKey{}, err
	}
	return resource.PointerOf(ptr), nil
}
