package state_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// asNotFound is an error outside the chain of a not-found error that
// claims the class through an As method, as errors.As allows.
type asNotFound struct{}

func (asNotFound) Error() string { return "as not found" }

func (asNotFound) As(target any) bool {
	if p, ok := target.(*state.ErrNotFound); ok {
		*p = notFoundMarker{}
		return true
	}
	return false
}

type notFoundMarker struct{}

func (notFoundMarker) NotFoundError() {}

// TestErrorPredicatesSeeThroughWrapping: each predicate finds its class
// the way errors.As does — the error itself, %w chains, errors.Join trees
// and As methods — and nothing else.
func TestErrorPredicatesSeeThroughWrapping(t *testing.T) {
	ptr := resource.NewPointer("ns", "T", "id")
	notFound := state.NewNotFoundError(ptr, "gone")
	owner := state.NewOwnerConflictError(ptr, "owned")
	plain := errors.New("plain")

	for _, tc := range []struct {
		name                    string
		err                     error
		notFound, conflict, own bool
	}{
		{name: "nil", err: nil},
		{name: "plain", err: plain},
		{name: "itself", err: notFound, notFound: true},
		{name: "wrapped twice", err: fmt.Errorf("a: %w", fmt.Errorf("b: %w", notFound)), notFound: true},
		{name: "subclass", err: owner, conflict: true, own: true},
		{name: "joined", err: errors.Join(plain, fmt.Errorf("x: %w", owner)), conflict: true, own: true},
		{name: "joined in a chain", err: fmt.Errorf("y: %w", errors.Join(plain, notFound)), notFound: true},
		{name: "two %w", err: fmt.Errorf("%w and %w", plain, notFound), notFound: true},
		{name: "As method", err: fmt.Errorf("z: %w", asNotFound{}), notFound: true},
		{name: "class error wrapping another class", err: state.NewInvalidError(ptr, "bad: %w", notFound), notFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.notFound, state.IsNotFoundError(tc.err))
			assert.Equal(t, tc.conflict, state.IsConflictError(tc.err))
			assert.Equal(t, tc.own, state.IsOwnerConflictError(tc.err))
			assert.False(t, state.IsPhaseConflictError(tc.err))
			assert.False(t, state.IsBufferOverrunError(tc.err))
		})
	}
}

// BenchmarkIsPredicates: a predicate on a nil error, on a class error and
// on a wrapped one that is not of the class (the whole chain walked).
func BenchmarkIsPredicates(b *testing.B) {
	ptr := resource.NewPointer("ns", "T", "id")
	errs := map[string]error{
		"nil":     nil,
		"class":   state.NewConflictError(ptr, "conflict"),
		"wrapped": fmt.Errorf("a: %w", fmt.Errorf("b: %w", state.NewConflictError(ptr, "conflict"))),
	}
	for _, name := range []string{"nil", "class", "wrapped"} {
		err := errs[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				state.IsNotFoundError(err)
			}
		})
	}
}
