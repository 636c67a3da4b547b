package safe

import (
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// SortFunc returns the list sorted by cmp, stably: resources cmp deems
// equal keep their order, which is by ID for a list a state returned (a
// nil cmp keeps the order). The list itself is not changed; the resources
// are the same values (for a read-only list, shared snapshots: never
// change them).
func (l List[T]) SortFunc(cmp func(a, b T) int) List[T] {
	items := slices.Clone(l.items)
	if cmp != nil {
		slices.SortStableFunc(items, cmp)
	}
	return List[T]{items: items}
}

// Filter returns the resources for which keep returns true, in order.
func (l List[T]) Filter(keep func(T) bool) List[T] {
	items := make([]T, 0, len(l.items))
	for _, t := range l.items {
		if keep(t) {
			items = append(items, t)
		}
	}
	return List[T]{items: items}
}

// Find returns the first resource for which match returns true.
func (l List[T]) Find(match func(T) bool) (T, bool) {
	for _, t := range l.items {
		if match(t) {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// Index returns the index of the first resource for which match returns
// true, -1 when none does.
func (l List[T]) Index(match func(T) bool) int {
	return slices.IndexFunc(l.items, match)
}

// Slice returns the resources as a new slice (the resources themselves are
// not copied).
func (l List[T]) Slice() []T { return slices.Clone(l.items) }

// ReaderListSorted lists the resources of a kind as Ts, sorted by cmp
// (see [List.SortFunc]).
func ReaderListSorted[T resource.Resource](ctx context.Context, rdr controller.Reader, kind resource.Kind, cmp func(a, b T) int, opts ...state.ListOption) (List[T], error) {
	l, err := ReaderList[T](ctx, rdr, kind, opts...)
	if err != nil {
		return List[T]{}, err
	}
	return l.SortFunc(cmp), nil
}

// StateListSorted lists the resources of a kind as Ts, sorted by cmp (see
// [List.SortFunc]).
func StateListSorted[T resource.Resource](ctx context.Context, st state.CoreState, kind resource.Kind, cmp func(a, b T) int, opts ...state.ListOption) (List[T], error) {
	l, err := StateList[T](ctx, st, kind, opts...)
	if err != nil {
		return List[T]{}, err
	}
	return l.SortFunc(cmp), nil
}
