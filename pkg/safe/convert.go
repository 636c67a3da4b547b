package safe

import (
	"errors"

	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ErrTypeMismatch is wrapped by every error about a resource whose Go type
// is not the expected one, of this package and of the generic controllers
// alike; those errors are of the invalid class ([state.IsInvalidError]).
var ErrTypeMismatch = cast.ErrTypeMismatch

// ErrNoResource is wrapped by the error of [WrappedStateEvent.Resource] and
// [WrappedStateEvent.Old] when the event carries no such resource.
var ErrNoResource = errors.New("event carries no resource")

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
		t, err := cast.To[T](r)
		if err != nil {
			return err
		}
		return fn(t)
	}
}
