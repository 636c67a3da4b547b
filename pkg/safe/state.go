package safe

import (
	"context"

	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// StateGet reads the resource ptr points to as a T.
func StateGet[T resource.Resource](ctx context.Context, st state.CoreState, ptr resource.Pointer, opts ...state.GetOption) (T, error) {
	if err := nilArg("StateGet", "state", st); err != nil {
		var zero T
		return zero, err
	}
	r, err := st.Get(ctx, ptr, opts...)
	if err != nil {
		var zero T
		return zero, err
	}
	return cast.To[T](r)
}

// StateList lists the resources of a kind as Ts.
func StateList[T resource.Resource](ctx context.Context, st state.CoreState, kind resource.Kind, opts ...state.ListOption) (List[T], error) {
	if err := nilArg("StateList", "state", st); err != nil {
		return List[T]{}, err
	}
	l, err := st.List(ctx, kind, opts...)
	if err != nil {
		return List[T]{}, err
	}
	return NewList[T](l)
}

// StateListAll lists the resources of T's type in T's default namespace.
func StateListAll[T typed.ResourceWithDefinition](ctx context.Context, st state.CoreState, opts ...state.ListOption) (List[T], error) {
	if err := nilArg("StateListAll", "state", st); err != nil {
		return List[T]{}, err
	}
	return StateList[T](ctx, st, typed.Kind[T](), opts...)
}

// StateModify is [state.State.Modify] with a typed function.
func StateModify[T resource.Resource](ctx context.Context, st state.State, emptyResource T, fn func(T) error, opts ...state.UpdateOption) error {
	if err := nilArg("StateModify", "state", st); err != nil {
		return err
	}
	if fn == nil {
		return st.Modify(ctx, emptyResource, nil, opts...)
	}
	return st.Modify(ctx, emptyResource, typedFunc(fn), opts...)
}

// StateModifyWithResult is [state.State.ModifyWithResult] with a typed
// function and result.
func StateModifyWithResult[T resource.Resource](ctx context.Context, st state.State, emptyResource T, fn func(T) error, opts ...state.UpdateOption) (T, error) {
	if err := nilArg("StateModifyWithResult", "state", st); err != nil {
		var zero T
		return zero, err
	}
	var wrapped func(resource.Resource) error
	if fn != nil {
		wrapped = typedFunc(fn)
	}
	r, err := st.ModifyWithResult(ctx, emptyResource, wrapped, opts...)
	if err != nil {
		var zero T
		return zero, err
	}
	return cast.To[T](r)
}

// StateUpdateWithConflicts is [state.State.UpdateWithConflicts] with a
// typed updater and result.
func StateUpdateWithConflicts[T resource.Resource](ctx context.Context, st state.State, ptr resource.Pointer, updater func(T) error, opts ...state.UpdateOption) (T, error) {
	if err := nilArg("StateUpdateWithConflicts", "state", st); err != nil {
		var zero T
		return zero, err
	}
	var wrapped state.UpdaterFunc
	if updater != nil {
		wrapped = typedFunc(updater)
	}
	r, err := st.UpdateWithConflicts(ctx, ptr, wrapped, opts...)
	if err != nil {
		var zero T
		return zero, err
	}
	return cast.To[T](r)
}

// StateWatchFor is [state.State.WatchFor] returning a T.
func StateWatchFor[T resource.Resource](ctx context.Context, st state.State, ptr resource.Pointer, conds ...state.WatchForConditionFunc) (T, error) {
	if err := nilArg("StateWatchFor", "state", st); err != nil {
		var zero T
		return zero, err
	}
	r, err := st.WatchFor(ctx, ptr, conds...)
	if err != nil {
		var zero T
		return zero, err
	}
	return cast.To[T](r)
}
