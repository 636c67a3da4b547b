package generic

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
)

// PanicError is the error a panic in a user function of a generic
// controller (a mapping, transform, mapper or removal function) becomes.
// It fails only the resource being processed; the controller goes on with
// the others. Test for it with errors.As.
type PanicError struct {
	// Value is the value the function panicked with.
	Value any
	// Resource is the resource being processed; nil when none.
	Resource resource.Pointer
	// Func names the function that panicked, e.g. "TransformFunc".
	Func string
	// Stack is the stack of the panicking goroutine.
	Stack []byte
}

// Error describes the panic and names the resource.
func (e *PanicError) Error() string {
	if e.Resource == nil {
		return fmt.Sprintf("%s panicked: %v", e.Func, e.Value)
	}
	return fmt.Sprintf("%s panicked for %s: %v", e.Func, resource.PointerString(e.Resource), e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
