package remote

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// ErrBookmarkUnknown is the marker of the bookmark-unknown class: a watch
// that lost its connection could not resume, because the server no longer
// knows the bookmark it would resume from (the daemon restarted, or the
// history moved on past it). The watch ended with an Errored event whose
// error is of this class (and of the buffer-overrun class); nothing was
// re-listed. Start a new watch (with bootstrap contents) to go on.
type ErrBookmarkUnknown interface{ BookmarkUnknownError() }

// IsBookmarkUnknownError reports whether err is (or wraps) an error of
// the bookmark-unknown class.
func IsBookmarkUnknownError(err error) bool {
	var target ErrBookmarkUnknown
	return errors.As(err, &target)
}

// Error is an error of the remote State: the status a call ended with, and
// the classes of the error the served state returned (see the package
// documentation). The state package's predicates (state.IsNotFoundError,
// state.IsConflictError, ...) and [IsBookmarkUnknownError] see its
// classes; status.FromError and status.Code see its status.
type Error struct {
	st      *status.Status
	classes []pb.ErrorClass
}

// Error returns the status's message.
func (e *Error) Error() string { return e.st.Message() }

// GRPCStatus returns the status the call ended with.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// Unwrap returns one marker per class, so that the state package's
// predicates see them, and the access-denied marker for a PermissionDenied
// status (access.IsDeniedError).
func (e *Error) Unwrap() []error {
	out := make([]error, 0, len(e.classes)+1)
	for _, c := range e.classes {
		if m := classMarker(c); m != nil {
			out = append(out, m)
		}
	}
	if e.st.Code() == codes.PermissionDenied {
		out = append(out, deniedMark{})
	}
	return out
}

// The markers of the classes.
type (
	notFoundMark      struct{}
	conflictMark      struct{}
	ownerMark         struct{}
	phaseMark         struct{}
	finalizersMark    struct{}
	invalidMark       struct{}
	fencedMark        struct{}
	overrunMark       struct{}
	bookmarkUnknownMk struct{}
	deniedMark        struct{}
)

func (notFoundMark) Error() string              { return "not found" }
func (notFoundMark) NotFoundError()             {}
func (conflictMark) Error() string              { return "conflict" }
func (conflictMark) ConflictError()             {}
func (ownerMark) Error() string                 { return "owner conflict" }
func (ownerMark) OwnerConflictError()           {}
func (phaseMark) Error() string                 { return "phase conflict" }
func (phaseMark) PhaseConflictError()           {}
func (finalizersMark) Error() string            { return "pending finalizers" }
func (finalizersMark) PendingFinalizersError()  {}
func (invalidMark) Error() string               { return "invalid" }
func (invalidMark) InvalidError()               {}
func (fencedMark) Error() string                { return "fenced" }
func (fencedMark) FencedError()                 {}
func (overrunMark) Error() string               { return "buffer overrun" }
func (overrunMark) BufferOverrunError()         {}
func (bookmarkUnknownMk) Error() string         { return "bookmark unknown" }
func (bookmarkUnknownMk) BookmarkUnknownError() {}
func (deniedMark) Error() string                { return "permission denied" }
func (deniedMark) AccessDeniedError()           {}

func classMarker(c pb.ErrorClass) error {
	switch c {
	case pb.ErrorClass_ERROR_CLASS_NOT_FOUND:
		return notFoundMark{}
	case pb.ErrorClass_ERROR_CLASS_CONFLICT:
		return conflictMark{}
	case pb.ErrorClass_ERROR_CLASS_OWNER_CONFLICT:
		return ownerMark{}
	case pb.ErrorClass_ERROR_CLASS_PHASE_CONFLICT:
		return phaseMark{}
	case pb.ErrorClass_ERROR_CLASS_PENDING_FINALIZERS:
		return finalizersMark{}
	case pb.ErrorClass_ERROR_CLASS_INVALID:
		return invalidMark{}
	case pb.ErrorClass_ERROR_CLASS_FENCED:
		return fencedMark{}
	case pb.ErrorClass_ERROR_CLASS_BUFFER_OVERRUN:
		return overrunMark{}
	case pb.ErrorClass_ERROR_CLASS_BOOKMARK_UNKNOWN:
		return bookmarkUnknownMk{}
	default:
		return nil
	}
}

// classesOf returns the classes err belongs to.
func classesOf(err error) []pb.ErrorClass {
	var out []pb.ErrorClass
	add := func(ok bool, c pb.ErrorClass) {
		if ok {
			out = append(out, c)
		}
	}
	add(state.IsNotFoundError(err), pb.ErrorClass_ERROR_CLASS_NOT_FOUND)
	add(state.IsConflictError(err), pb.ErrorClass_ERROR_CLASS_CONFLICT)
	add(state.IsOwnerConflictError(err), pb.ErrorClass_ERROR_CLASS_OWNER_CONFLICT)
	add(state.IsPhaseConflictError(err), pb.ErrorClass_ERROR_CLASS_PHASE_CONFLICT)
	add(state.IsPendingFinalizersError(err), pb.ErrorClass_ERROR_CLASS_PENDING_FINALIZERS)
	add(state.IsInvalidError(err), pb.ErrorClass_ERROR_CLASS_INVALID)
	add(state.IsFencedError(err), pb.ErrorClass_ERROR_CLASS_FENCED)
	add(state.IsBufferOverrunError(err), pb.ErrorClass_ERROR_CLASS_BUFFER_OVERRUN)
	add(IsBookmarkUnknownError(err), pb.ErrorClass_ERROR_CLASS_BOOKMARK_UNKNOWN)
	return out
}

// codeOf returns the gRPC code of an error of the given classes (see the
// package documentation's table).
func codeOf(err error, classes []pb.ErrorClass) codes.Code {
	has := func(c pb.ErrorClass) bool {
		for _, x := range classes {
			if x == c {
				return true
			}
		}
		return false
	}
	switch {
	case has(pb.ErrorClass_ERROR_CLASS_NOT_FOUND):
		return codes.NotFound
	case has(pb.ErrorClass_ERROR_CLASS_OWNER_CONFLICT), has(pb.ErrorClass_ERROR_CLASS_PHASE_CONFLICT),
		has(pb.ErrorClass_ERROR_CLASS_PENDING_FINALIZERS), has(pb.ErrorClass_ERROR_CLASS_FENCED):
		return codes.FailedPrecondition
	case has(pb.ErrorClass_ERROR_CLASS_CONFLICT):
		return codes.Aborted
	case has(pb.ErrorClass_ERROR_CLASS_BUFFER_OVERRUN), has(pb.ErrorClass_ERROR_CLASS_BOOKMARK_UNKNOWN):
		return codes.OutOfRange
	case has(pb.ErrorClass_ERROR_CLASS_INVALID):
		return codes.InvalidArgument
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	default:
		return codes.Unknown
	}
}

// toStatus returns the status a server call ends with for err: err's own
// status when it carries one (a status error, or an error with a
// GRPCStatus method), PermissionDenied with the denial's message for an
// access denial (access.IsDeniedError), else a status of err's classes'
// code with the classes in its details.
func toStatus(err error) *status.Status {
	if err == nil {
		return nil
	}
	if access.IsDeniedError(err) {
		return status.New(codes.PermissionDenied, err.Error())
	}
	var re *Error
	if errors.As(err, &re) {
		return re.withDetail()
	}
	var se interface{ GRPCStatus() *status.Status }
	if errors.As(err, &se) {
		if st := se.GRPCStatus(); st != nil && st.Code() != codes.OK {
			return st
		}
	}
	if codec.IsUnknownTypeError(err) || codec.IsDecodeError(err) || codec.IsEncodeError(err) {
		// Invalid input of the codec: the classes say invalid.
		err = state.NewInvalidError(nil, "%w", err)
	}
	classes := classesOf(err)
	st := status.New(codeOf(err, classes), err.Error())
	if len(classes) == 0 {
		return st
	}
	if withDetail, derr := st.WithDetails(&pb.ErrorDetail{Classes: classes}); derr == nil {
		return withDetail
	}
	return st
}

// fromStatus returns the client's error for a call that ended with err: an
// [*Error] with the classes the status's details carry, or, for a status
// without them, the classes its code implies (InvalidArgument: invalid;
// OutOfRange: buffer overrun).
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	var classes []pb.ErrorClass
	for _, d := range st.Details() {
		if ed, ok := d.(*pb.ErrorDetail); ok {
			classes = append(classes, ed.Classes...)
		}
	}
	if len(classes) == 0 {
		switch st.Code() {
		case codes.InvalidArgument:
			classes = []pb.ErrorClass{pb.ErrorClass_ERROR_CLASS_INVALID}
		case codes.OutOfRange:
			classes = []pb.ErrorClass{pb.ErrorClass_ERROR_CLASS_BUFFER_OVERRUN}
		}
	}
	return &Error{st: st, classes: classes}
}

// errorToPB returns err as an Errored event's error.
func errorToPB(err error) *pb.Error {
	st := toStatus(err)
	return &pb.Error{Code: uint32(st.Code()), Message: st.Message(), Classes: classesOf(err)}
}

// errorFromPB returns the client's error for an Errored event's error.
func errorFromPB(e *pb.Error) error {
	if e == nil {
		return &Error{st: status.New(codes.Unknown, "remote: Errored event without an error")}
	}
	return &Error{st: status.New(codes.Code(e.Code), e.Message), classes: e.Classes}
}

// withDetail returns e's status with its classes in the details.
func (e *Error) withDetail() *status.Status {
	if st, err := e.st.WithDetails(&pb.ErrorDetail{Classes: e.classes}); err == nil {
		return st
	}
	return e.st
}

// bookmarkUnknown returns the error that ends a watch that could not
// resume from its bookmark, with cause the server's refusal.
func bookmarkUnknown(cause error) error {
	msg := fmt.Sprintf("remote: the watch lost its connection and cannot resume: the server does not know its bookmark (the daemon restarted, or its history moved on): %v", cause)
	return &Error{
		st:      status.New(codes.OutOfRange, msg),
		classes: []pb.ErrorClass{pb.ErrorClass_ERROR_CLASS_BOOKMARK_UNKNOWN, pb.ErrorClass_ERROR_CLASS_BUFFER_OVERRUN},
	}
}
