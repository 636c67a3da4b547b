package xform

import (
	"runtime/debug"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Call runs the user function fn, named name, for the resource ptr (nil
// when there is none). A panic in fn is recovered, logged with its stack
// and returned as a *generic.PanicError naming ptr.
func Call(logger *zap.Logger, name string, ptr resource.Pointer, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(logger, name, ptr, p)
		}
	}()
	return fn()
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
