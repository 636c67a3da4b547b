package safe

import (
	"iter"

	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
)

// List is a typed list of resources, in the order of the list it was made
// from (sorted by ID for lists returned by a state). The zero value is an
// empty list.
type List[T any] struct {
	items []T
}

// NewList converts a resource.List; a resource of another type than T is
// an error wrapping [ErrTypeMismatch].
func NewList[T resource.Resource](l resource.List) (List[T], error) {
	items := make([]T, 0, len(l.Items))
	for _, r := range l.Items {
		t, err := cast.To[T](r)
		if err != nil {
			return List[T]{}, err
		}
		items = append(items, t)
	}
	return List[T]{items: items}, nil
}

// Len returns the number of resources.
func (l List[T]) Len() int { return len(l.items) }

// Get returns the i-th resource; it panics if i is out of range, like a
// slice index.
func (l List[T]) Get(i int) T { return l.items[i] }

// All iterates over the resources in order.
func (l List[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, t := range l.items {
			if !yield(t) {
				return
			}
		}
	}
}
