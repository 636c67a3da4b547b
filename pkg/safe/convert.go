package safe

import (
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// ErrTypeMismatch is wrapped by every error of this package about a
// resource whose Go type is not the expected one.
var ErrTypeMismatch = errors.New("resource type mismatch")

// ErrNoResource is wrapped by the error of [WrappedStateEvent.Resource] and
// [WrappedStateEvent.Old] when the event carries no such resource.
var ErrNoResource = errors.New("event carries no resource")

// ResourceWithDefinition is a resource type that describes itself:
// Definition must work on the zero value (a nil pointer), as it does for
// [typed.Resource].
type ResourceWithDefinition interface {
	resource.Resource
	Definition() typed.Definition
}

// kindOf returns the kind of T's definition: its type in its default
// namespace.
func kindOf[T ResourceWithDefinition]() resource.Kind {
	var zero T
	def := zero.Definition()
	return resource.NewKind(def.DefaultNamespace, def.Type)
}

// convert returns r as a T, or an error wrapping ErrTypeMismatch.
func convert[T resource.Resource](r resource.Resource) (T, error) {
	t, ok := r.(T)
	if !ok {
		var zero T
		if r == nil {
			return zero, fmt.Errorf("nil resource, want %T: %w", zero, ErrTypeMismatch)
		}
		return zero, fmt.Errorf("resource %s is a %T, want %T: %w", resource.String(r), r, zero, ErrTypeMismatch)
	}
	return t, nil
}

// nilArg returns the invalid-class error of helper fn called with a nil
// what ("state", "reader", "writer"), or nil when v is usable.
func nilArg(fn, what string, v any) error {
	if usercode.IsNil(v) {
		return state.NewInvalidError(nil, "safe.%s: nil %s", fn, what)
	}
	return nil
}

// typedFunc adapts a function of T to a function of resource.Resource that
// refuses resources of another type.
func typedFunc[T resource.Resource](fn func(T) error) func(resource.Resource) error {
	return func(r resource.Resource) error {
		t, err := convert[T](r)
		if err != nil {
			return err
		}
		return fn(t)
	}
}
