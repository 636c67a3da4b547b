package state

import (
	"errors"
	"fmt"
	"strings"

	"github.com/resgraph/resgraph/pkg/internal/errclass"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Error classes are marker interfaces: an error belongs to a class when it,
// or an error it wraps, implements the class's marker method. Any backend
// can define its own error types and make them belong to a class; the Is*
// predicates see through wrapping (errors.As).

// ErrNotFound is the marker of the not-found class.
type ErrNotFound interface{ NotFoundError() }

// ErrConflict is the marker of the conflict class (version, owner, phase or
// pending-finalizer conflicts all belong to it).
type ErrConflict interface{ ConflictError() }

// ErrOwnerConflict is the marker of the owner-conflict class.
type ErrOwnerConflict interface{ OwnerConflictError() }

// ErrPhaseConflict is the marker of the phase-conflict class.
type ErrPhaseConflict interface{ PhaseConflictError() }

// ErrPendingFinalizers is the marker of the pending-finalizers class.
type ErrPendingFinalizers interface{ PendingFinalizersError() }

// ErrBufferOverrun is the marker of the buffer-overrun class.
type ErrBufferOverrun interface{ BufferOverrunError() }

// ErrInvalid is the marker of the invalid-input class: a request the state
// refused before doing anything (empty identity, nil resource, bad bookmark,
// nil channel...).
type ErrInvalid interface{ InvalidError() }

// IsNotFoundError reports whether err is (or wraps) a not-found error.
func IsNotFoundError(err error) bool { return errclass.Is[ErrNotFound](err) }

// IsConflictError reports whether err is (or wraps) a conflict error; owner,
// phase and pending-finalizer conflicts are conflicts too.
func IsConflictError(err error) bool { return errclass.Is[ErrConflict](err) }

// IsOwnerConflictError reports whether err is (or wraps) an owner conflict.
func IsOwnerConflictError(err error) bool { return errclass.Is[ErrOwnerConflict](err) }

// IsPhaseConflictError reports whether err is (or wraps) a phase conflict.
func IsPhaseConflictError(err error) bool { return errclass.Is[ErrPhaseConflict](err) }

// IsPendingFinalizersError reports whether err is (or wraps) a
// pending-finalizers error.
func IsPendingFinalizersError(err error) bool { return errclass.Is[ErrPendingFinalizers](err) }

// IsBufferOverrunError reports whether err is (or wraps) a buffer-overrun
// error.
func IsBufferOverrunError(err error) bool { return errclass.Is[ErrBufferOverrun](err) }

// IsInvalidError reports whether err is (or wraps) an invalid-input error.
func IsInvalidError(err error) bool { return errclass.Is[ErrInvalid](err) }

// classError is the error type of this package: the pointer of the
// resource involved (if any) and a message formatted like fmt.Errorf, whose
// %w operands stay reachable through Unwrap. Each class has its own wrapper
// type below, so that errors.As with a marker interface finds it.
type classError struct {
	ptr resource.Pointer
	err error
}

func newErr(ptr resource.Pointer, format string, args []any) *classError {
	return &classError{ptr: ptr, err: fmt.Errorf(format, args...)}
}

// Error names the resource, then the message; a message that starts by
// naming the same resource (a wrapped error of its own, such as
// resource.ValidatePointer's) is not prefixed twice.
func (e *classError) Error() string {
	msg := e.err.Error()
	if e.ptr == nil {
		return msg
	}
	prefix := "resource " + resource.PointerString(e.ptr) + ": "
	if strings.HasPrefix(msg, prefix) {
		return msg
	}
	return prefix + msg
}

func (e *classError) Unwrap() error { return errors.Unwrap(e.err) }

type (
	notFoundErr      struct{ *classError }
	conflictErr      struct{ *classError }
	ownerConflictErr struct{ *classError }
	phaseConflictErr struct{ *classError }
	finalizersErr    struct{ *classError }
	overrunErr       struct{ *classError }
	invalidErr       struct{ *classError }
)

func (notFoundErr) NotFoundError()            {}
func (conflictErr) ConflictError()            {}
func (ownerConflictErr) ConflictError()       {}
func (ownerConflictErr) OwnerConflictError()  {}
func (phaseConflictErr) ConflictError()       {}
func (phaseConflictErr) PhaseConflictError()  {}
func (finalizersErr) ConflictError()          {}
func (finalizersErr) PendingFinalizersError() {}
func (overrunErr) BufferOverrunError()        {}
func (invalidErr) InvalidError()              {}

// NewNotFoundError returns a not-found error about ptr. The message is
// formatted like fmt.Errorf (and %w wraps).
func NewNotFoundError(ptr resource.Pointer, format string, args ...any) error {
	return notFoundErr{newErr(ptr, format, args)}
}

// NewConflictError returns a (version) conflict error about ptr.
func NewConflictError(ptr resource.Pointer, format string, args ...any) error {
	return conflictErr{newErr(ptr, format, args)}
}

// NewOwnerConflictError returns an owner-conflict error about ptr.
func NewOwnerConflictError(ptr resource.Pointer, format string, args ...any) error {
	return ownerConflictErr{newErr(ptr, format, args)}
}

// NewPhaseConflictError returns a phase-conflict error about ptr.
func NewPhaseConflictError(ptr resource.Pointer, format string, args ...any) error {
	return phaseConflictErr{newErr(ptr, format, args)}
}

// NewPendingFinalizersError returns a pending-finalizers error about ptr.
func NewPendingFinalizersError(ptr resource.Pointer, format string, args ...any) error {
	return finalizersErr{newErr(ptr, format, args)}
}

// NewBufferOverrunError returns a buffer-overrun error (ptr may be nil).
func NewBufferOverrunError(ptr resource.Pointer, format string, args ...any) error {
	return overrunErr{newErr(ptr, format, args)}
}

// NewInvalidError returns an invalid-input error (ptr may be nil).
func NewInvalidError(ptr resource.Pointer, format string, args ...any) error {
	return invalidErr{newErr(ptr, format, args)}
}
