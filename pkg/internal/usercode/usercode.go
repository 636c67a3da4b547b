// Package usercode is how resgraph calls code it does not control: the
// methods of controllers, resources, errors, pointers and states written by
// users or by other implementations. Such code may panic, or hand back a
// typed nil (a nil pointer in a non-nil interface) where a value was
// expected; resgraph turns both into plain data (a [*Panic], a message) at
// the call, so that no Runtime or state goroutine crashes and no user method
// ever runs while a Runtime lock is held.
//
// The rules the callers follow (see each package's doc for the contract):
//
//   - a user method is called only through [Call] (or inside a function
//     that recovers the same way), never with a lock held;
//   - an error from user code is rendered once, with [ErrorText], into a
//     string that logs and statuses carry: loggers never call a user
//     Error method themselves;
//   - a typed-nil error is a failure, described as such ([ErrorText]).
package usercode

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"unsafe"
)

// Panic is a panic recovered from user code: the value it panicked with and
// the stack of the goroutine at the panic.
type Panic struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine.
	Stack []byte
}

// Error describes the panic with its value; it never panics itself.
func (p *Panic) Error() string { return "panic: " + Sprint(p.Value) }

// Call calls fn and returns the panic it raised, nil when fn returned.
func Call(fn func()) (p *Panic) {
	defer func() {
		if v := recover(); v != nil {
			p = &Panic{Value: v, Stack: debug.Stack()}
		}
	}()
	fn()
	return nil
}

// Recovered turns the value of recover() into a *Panic (nil for nil). Use it
// in a deferred function: `defer func() { p = usercode.Recovered(recover()) }()`.
func Recovered(v any) *Panic {
	if v == nil {
		return nil
	}
	return &Panic{Value: v, Stack: debug.Stack()}
}

// IsNil reports whether v is nil or an interface holding a nil pointer,
// map, slice, func, channel or interface: a value whose methods typically
// panic, and which callers treat as absent.
//
// A value of a pointer-shaped kind (pointer, map, func, channel,
// unsafe.Pointer) is the interface's data word itself, so it is read
// there, without building a reflect.Value.
func IsNil(v any) bool {
	if v == nil {
		return true
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Pointer, reflect.Map, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return (*eface)(unsafe.Pointer(&v)).data == nil
	case reflect.Slice, reflect.Interface:
		return reflect.ValueOf(v).IsNil()
	default:
		return false
	}
}

// eface is the layout of an empty interface value: its type and its data
// word (the value itself for a pointer-shaped type).
type eface struct {
	typ, data unsafe.Pointer
}

// CopiesPlainly reports whether v, a resource, says that its DeepCopy,
// CopyInto and ApproxSize run no user code (its CopiesWithoutUserCode(v)
// reports true, as a typed resource of a plain-value spec does, and a type
// embedding one does not): they cannot panic, and the copy has v's
// identity, so a state copies v without a deferred recover and without
// checking the copy.
func CopiesPlainly(v any) bool {
	pc, ok := v.(interface{ CopiesWithoutUserCode(self any) bool })
	return ok && pc.CopiesWithoutUserCode(v)
}

// ErrorText returns err's message for logs and statuses, without ever
// panicking: "" for nil; for a typed-nil error, "typed-nil error (T)"
// (T is the dynamic type), since its Error method cannot be trusted and the
// value is almost always a bug (a nil *T returned as an error); when Error
// panics, "error of type T: Error panicked: <value>".
func ErrorText(err error) (s string) {
	if err == nil {
		return ""
	}
	if IsNil(err) {
		return TypedNilText(err)
	}
	defer func() {
		if v := recover(); v != nil {
			s = fmt.Sprintf("error of type %T: Error panicked: %s", err, Sprint(v))
		}
	}()
	return err.Error()
}

// TypedNilText describes a typed-nil error (see [ErrorText]).
func TypedNilText(err error) string {
	return fmt.Sprintf("typed-nil error (%T)", err)
}

// Sprint formats v like fmt.Sprint, never panicking: fmt recovers a
// panicking String or Error method, but not one that panics with a value
// whose own String method panics; then the type alone is given.
func Sprint(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("<%T, unprintable>", v)
		}
	}()
	return fmt.Sprint(v)
}
