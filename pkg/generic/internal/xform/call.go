package xform

import (
	"errors"
	"runtime/debug"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Call runs the user function fn, named name, for the resource ptr (nil
// when there is none). An error fn returns comes back as a *FuncError
// naming the function; a panic in fn is recovered, logged with its stack
// and returned as a *generic.PanicError.
func Call(logger *zap.Logger, name string, ptr resource.Pointer, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(logger, name, ptr, p)
		}
	}()
	if err := fn(); err != nil {
		return &FuncError{Func: name, Err: err}
	}
	return nil
}

// FuncError is the error a user function returned, named: "Func: Err".
// It unwraps to Err.
type FuncError struct {
	Func string
	Err  error
}

func (e *FuncError) Error() string { return e.Func + ": " + usercode.ErrorText(e.Err) }

func (e *FuncError) Unwrap() error { return e.Err }

// IsUserFailure reports whether err is the failure of a user function (a
// *FuncError or a *generic.PanicError), not of a state operation.
func IsUserFailure(err error) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	var fe *FuncError
	var pe *generic.PanicError
	return errors.As(err, &fe) || errors.As(err, &pe)
}

// CallValue is [Call] for a user function that returns a value.
func CallValue[R any](logger *zap.Logger, name string, ptr resource.Pointer, fn func() R) (res R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(logger, name, ptr, p)
		}
	}()
	return fn(), nil
}

func panicError(logger *zap.Logger, name string, ptr resource.Pointer, p any) error {
	pe := &generic.PanicError{Func: name, Value: p, Stack: debug.Stack()}
	if ptr != nil {
		pe.Resource = resource.PointerOf(ptr)
	}
	logger.Error("user function panicked", zap.String("func", name), zap.String("resource", pointerString(ptr)),
		zap.Any("panic", p), zap.ByteString("stack", pe.Stack))
	return pe
}

func pointerString(ptr resource.Pointer) string {
	if ptr == nil {
		return ""
	}
	return resource.PointerString(ptr)
}
