package safe

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// ReaderGetByID reads the resource of T's type with ID id in T's default
// namespace (see the package documentation for T), as [ReaderGet] does:
// the call site needs no pointer.
func ReaderGetByID[T typed.ResourceWithDefinition](ctx context.Context, rdr controller.Reader, id resource.ID, opts ...state.GetOption) (T, error) {
	if err := nilArg("ReaderGetByID", "reader", rdr); err != nil {
		var zero T
		return zero, err
	}
	return ReaderGet[T](ctx, rdr, typed.Pointer[T](id), opts...)
}

// StateGetByID reads the resource of T's type with ID id in T's default
// namespace, as [StateGet] does: the call site needs no pointer.
func StateGetByID[T typed.ResourceWithDefinition](ctx context.Context, st state.CoreState, id resource.ID, opts ...state.GetOption) (T, error) {
	if err := nilArg("StateGetByID", "state", st); err != nil {
		var zero T
		return zero, err
	}
	return StateGet[T](ctx, st, typed.Pointer[T](id), opts...)
}
