// Package cast is the one checked conversion of a resource to a Go type,
// shared by pkg/safe and the generic controllers, so that a resource of the
// wrong type is the same mistake, with the same error class, everywhere.
package cast

import (
	"errors"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ErrTypeMismatch is wrapped by every error of [To]. pkg/safe exports it as
// safe.ErrTypeMismatch.
var ErrTypeMismatch = errors.New("resource type mismatch")

// To returns r as a T. A resource of another Go type, or a nil one, is an
// invalid-class error (state.IsInvalidError) that wraps [ErrTypeMismatch]
// and names the resource.
func To[T resource.Resource](r resource.Resource) (T, error) {
	t, ok := r.(T)
	if ok {
		return t, nil
	}
	var zero T
	if usercode.IsNil(r) {
		return zero, state.NewInvalidError(nil, "nil resource, want %T: %w", zero, ErrTypeMismatch)
	}
	return zero, state.NewInvalidError(nil, "resource %s is a %T, want %T: %w", resource.String(r), r, zero, ErrTypeMismatch)
}
