package safe

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// ForEach calls fn on every resource, in order.
func (l List[T]) ForEach(fn func(T)) {
	for _, t := range l.items {
		fn(t)
	}
}

// ForEachErr calls fn on every resource, in order, and stops at the
// first error, which it returns.
func (l List[T]) ForEachErr(fn func(T) error) error {
	for _, t := range l.items {
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}

// FilterLabelQuery returns the resources whose labels match the query its
// options build (every term holds; see resource.LabelTerm.Matches), in
// order, as a new list. A query with a term that cannot be evaluated (an
// empty key, a numeric operation whose value is not an integer: see
// resource.LabelQuery.Validate) selects nothing — a List or a watch with it
// is refused with an error instead.
func (l List[T]) FilterLabelQuery(opts ...resource.LabelQueryOption) List[T] {
	q := resource.NewLabelQuery(opts...)
	if q.Validate() != nil {
		return List[T]{}
	}
	var kept []T
	for _, t := range l.items {
		if q.Matches(*metadataOf(t).Labels()) {
			kept = append(kept, t)
		}
	}
	return List[T]{items: kept}
}

// Pointers returns the pointers to the resources, in order (values that
// keep no reference to the resources).
func (l List[T]) Pointers() []resource.Pointer {
	ptrs := make([]resource.Pointer, 0, len(l.items))
	for _, t := range l.items {
		ptrs = append(ptrs, resource.PointerOf(metadataOf(t)))
	}
	return ptrs
}

// IDs returns the IDs of the resources, in order.
func (l List[T]) IDs() []resource.ID {
	ids := make([]resource.ID, 0, len(l.items))
	for _, t := range l.items {
		ids = append(ids, metadataOf(t).ID())
	}
	return ids
}

// metadataOf returns the metadata of a list's element: every List is made
// of resources (by NewList and the helpers), whatever its type parameter.
func metadataOf[T any](t T) *resource.Metadata {
	return any(t).(resource.Resource).Metadata()
}
