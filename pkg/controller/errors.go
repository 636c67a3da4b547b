package controller

import (
	"errors"
	"fmt"
)

// accessDeniedError is the error of an access a Runtime refused to a
// controller (rules C3–C5).
type accessDeniedError struct {
	controller, op, target, reason string
}

func (e *accessDeniedError) Error() string {
	return fmt.Sprintf("controller %q: %s %s denied: %s", e.controller, e.op, e.target, e.reason)
}

// NewAccessDeniedError returns the error a Runtime gives a controller for
// a refused access: controllerName tried op (Get, Create, AddFinalizer...)
// on target (a resource or kind, as text) and was refused for reason. The
// message names all four; [IsAccessDeniedError] reports it.
func NewAccessDeniedError(controllerName, op, target, reason string) error {
	return &accessDeniedError{controller: controllerName, op: op, target: target, reason: reason}
}

// IsAccessDeniedError reports whether err is (or wraps) the error of an
// access the Runtime refused to a controller: a read outside its declared
// inputs and its own outputs (rule C3), a write outside its declared
// outputs (C3), or a finalizer change on a resource that is neither a
// strong input, a QController primary input nor one of its own outputs
// (C5). A refused access wrote nothing.
func IsAccessDeniedError(err error) bool {
	var e *accessDeniedError
	return errors.As(err, &e)
}
