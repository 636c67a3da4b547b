package remote

import (
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/state"
)

// toStatus returns the status of an observer's error: NotFound for the
// not-found class, InvalidArgument for the invalid class, a status the
// error carries as it is, Unknown otherwise; the message is the error's.
func toStatus(err error) error {
	var gs interface{ GRPCStatus() *status.Status }
	switch {
	case state.IsNotFoundError(err):
		return status.Error(codes.NotFound, err.Error())
	case state.IsInvalidError(err):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.As(err, &gs):
		return gs.GRPCStatus().Err()
	}
	return status.Error(codes.Unknown, err.Error())
}

// Error is the error of a client call that the server (or the
// connection) refused: its message is the status's, and it belongs to
// the not-found class for NotFound and to the invalid class for
// InvalidArgument (rule OB2). status.FromError and status.Code see its
// status.
type Error struct{ st *status.Status }

// Error returns the status's message.
func (e *Error) Error() string { return e.st.Message() }

// GRPCStatus returns the status.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// Unwrap returns the class marker of the status's code.
func (e *Error) Unwrap() error {
	switch e.st.Code() {
	case codes.NotFound:
		return notFound{}
	case codes.InvalidArgument:
		return invalid{}
	}
	return nil
}

type (
	notFound struct{}
	invalid  struct{}
)

func (notFound) Error() string  { return "not found" }
func (notFound) NotFoundError() {}
func (invalid) Error() string   { return "invalid" }
func (invalid) InvalidError()   {}

// fromStatus returns the client's error of a call's error.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	return &Error{st: status.Convert(err)}
}

func invalidStatus(msg string) *status.Status { return status.New(codes.InvalidArgument, msg) }
