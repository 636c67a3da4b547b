package safe

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// ReaderGet reads the resource ptr points to as a T.
func ReaderGet[T resource.Resource](ctx context.Context, rdr controller.Reader, ptr resource.Pointer, opts ...state.GetOption) (T, error) {
	if err := nilArg("ReaderGet", "reader", rdr); err != nil {
		var zero T
		return zero, err
	}
	r, err := rdr.Get(ctx, ptr, opts...)
	if err != nil {
		var zero T
		return zero, err
	}
	return cast.To[T](r)
}

// ReaderList lists the resources of a kind as Ts.
func ReaderList[T resource.Resource](ctx context.Context, rdr controller.Reader, kind resource.Kind, opts ...state.ListOption) (List[T], error) {
	if err := nilArg("ReaderList", "reader", rdr); err != nil {
		return List[T]{}, err
	}
	l, err := rdr.List(ctx, kind, opts...)
	if err != nil {
		return List[T]{}, err
	}
	return NewList[T](l)
}

// ReaderListAll lists the resources of T's type in T's default namespace.
func ReaderListAll[T typed.ResourceWithDefinition](ctx context.Context, rdr controller.Reader, opts ...state.ListOption) (List[T], error) {
	if err := nilArg("ReaderListAll", "reader", rdr); err != nil {
		return List[T]{}, err
	}
	return ReaderList[T](ctx, rdr, typed.Kind[T](), opts...)
}

// WriterModify is [controller.Writer.Modify] with a typed function.
func WriterModify[T resource.Resource](ctx context.Context, w controller.Writer, emptyResource T, fn func(T) error, opts ...controller.ModifyOption) error {
	if err := nilArg("WriterModify", "writer", w); err != nil {
		return err
	}
	if fn == nil {
		return w.Modify(ctx, emptyResource, nil, opts...)
	}
	return w.Modify(ctx, emptyResource, typedFunc(fn), opts...)
}

// WriterModifyWithResult is [controller.Writer.ModifyWithResult] with a
// typed function and result.
func WriterModifyWithResult[T resource.Resource](ctx context.Context, w controller.Writer, emptyResource T, fn func(T) error, opts ...controller.ModifyOption) (T, error) {
	if err := nilArg("WriterModifyWithResult", "writer", w); err != nil {
		var zero T
		return zero, err
	}
	var wrapped func(resource.Resource) error
	if fn != nil {
		wrapped = typedFunc(fn)
	}
	r, err := w.ModifyWithResult(ctx, emptyResource, wrapped, opts...)
	if err != nil {
		var zero T
		return zero, err
	}
	return cast.To[T](r)
}
