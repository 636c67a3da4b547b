package safe

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// ReaderListByIndex lists, as Ts, the resources of kind that the custom
// index named index lists under key (see [controller.IndexReader]). A
// reader that serves no index (it does not implement
// controller.IndexReader) is an invalid-class error, like a wrong type.
func ReaderListByIndex[T resource.Resource](ctx context.Context, rdr controller.Reader, kind resource.Kind, index, key string, opts ...state.ListOption) (List[T], error) {
	if err := nilArg("ReaderListByIndex", "reader", rdr); err != nil {
		return List[T]{}, err
	}
	ir, ok := rdr.(controller.IndexReader)
	if !ok {
		return List[T]{}, state.NewInvalidError(nil, "safe.ReaderListByIndex: the reader (%T) serves no index (it is not a controller.IndexReader)", rdr)
	}
	l, err := ir.ListByIndex(ctx, kind, index, key, opts...)
	if err != nil {
		return List[T]{}, err
	}
	return NewList[T](l)
}

// ReaderListAllByIndex is [ReaderListByIndex] for the resources of T's
// type in T's default namespace.
func ReaderListAllByIndex[T typed.ResourceWithDefinition](ctx context.Context, rdr controller.Reader, index, key string, opts ...state.ListOption) (List[T], error) {
	if err := nilArg("ReaderListAllByIndex", "reader", rdr); err != nil {
		return List[T]{}, err
	}
	return ReaderListByIndex[T](ctx, rdr, typed.Kind[T](), index, key, opts...)
}

// IndexFunc adapts a typed index function to the one runtime.WithIndex
// takes. The function gets the state's shared, read-only snapshot (it must
// not change it); a resource that is not a T is listed under no key.
func IndexFunc[T resource.Resource](fn func(T) []string) func(resource.Resource) []string {
	return func(r resource.Resource) []string {
		t, err := cast.To[T](r)
		if err != nil {
			return nil
		}
		return fn(t)
	}
}
