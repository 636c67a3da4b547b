package inmem

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// key returns the comparable pointer ptr names, or the error of
// [resource.ValidatePointer] (invalid class) when ptr is nil or its
// namespace, type or ID is empty (rule R3).
func key(ptr resource.Pointer) (resource.PointerKey, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return resource.PointerKey{}, err
	}
	return resource.PointerOf(ptr), nil
}
