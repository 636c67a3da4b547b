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

// Error names the function and the panic value. It does not name the
// resource: the error chain around a PanicError does, once (the Runtime's
// item, or the controller's "input <pointer>").
func (e *PanicError) Error() string {
	return fmt.Sprintf("%s panicked: %v", e.Func, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
