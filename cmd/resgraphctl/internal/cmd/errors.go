package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/endpoint"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

// usageError is a command line that is wrong (a flag, an argument, a
// selector, an output format): exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErr(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// errPrinted is the error of a command that printed its one error line
// itself: Main prints nothing more, and exits with status 1.
var errPrinted = errors.New("failed (said above)")

// unknownType is the error of a type name the daemon does not know: it
// lists the names it knows.
func unknownType(name string, defs *definition.Registry) error {
	var names []string
	for _, d := range defs.All() {
		names = append(names, shortName(d))
	}
	if len(names) == 0 {
		return errorf("unknown type %q: the daemon knows no resource type", name)
	}
	return errorf("unknown type %q: the daemon knows %s (resgraphctl types lists them with their aliases)", name, strings.Join(names, ", "))
}

// errRestarted ends a watch the daemon cannot resume.
var errRestarted = errors.New("the watch cannot resume: the daemon restarted (or its history moved past the last change this watch printed), so changes may have been missed; run the command again to start over")

// message returns what resgraphctl prints for err: one plain line — a
// gRPC status's message, what to do when the daemon cannot be reached —
// never a Go dump.
func (a *app) message(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		return fmt.Sprintf("the daemon at %s did not answer within --request-timeout %s", a.endpoint, a.requestTimeout)
	case status.Code(err) == codes.Unavailable:
		cause := dialCause(status.Convert(err).Message())
		return fmt.Sprintf("cannot reach the daemon at %s: %s (%s)", a.endpoint, cause, a.reachHint(cause))
	case status.Code(err) == codes.Unimplemented:
		return fmt.Sprintf("the daemon at %s does not serve this: %s", a.endpoint, status.Convert(err).Message())
	case remote.IsBookmarkUnknownError(err):
		return errRestarted.Error()
	case state.IsOwnerConflictError(err):
		return err.Error() + " (resgraphctl writes as an outside writer: a controller's resources are its to write)"
	}
	var s interface{ GRPCStatus() *status.Status }
	if errors.As(err, &s) && s.GRPCStatus().Code() != codes.Unknown {
		return s.GRPCStatus().Message()
	}
	return err.Error()
}

// reachHint says what to check when the daemon cannot be reached. A
// daemon that serves mutual TLS on HOST:PORT accepts the connection, then
// hangs up on a client without TLS (the cause is then no dial error but
// "error reading server preface: EOF" or a reset), which looks like no
// daemon at all: then, on HOST:PORT without TLS flags, the hint names
// them.
func (a *app) reachHint(cause string) string {
	const hint = "is it running? --endpoint or $RESGRAPH_ENDPOINT names another"
	target, err := endpoint.Target(a.endpoint)
	if err != nil || strings.HasPrefix(target, "unix://") || a.tls.Enabled() || strings.HasPrefix(cause, "dial ") {
		return hint
	}
	return hint + "; a daemon that serves mutual TLS there needs --client-certificate, --client-key and --certificate-authority"
}

// dialCause keeps what matters of gRPC's message for a failed dial:
// `connection error: desc = "transport: Error while dialing: dial unix
// /x: connect: no such file or directory"` becomes `dial unix /x:
// connect: no such file or directory`, and `connection error: desc =
// "error reading server preface: EOF"` becomes `the connection was closed
// before the daemon spoke (error reading server preface: EOF)`.
func dialCause(msg string) string {
	msg = strings.TrimPrefix(msg, `connection error: desc = "`)
	if _, after, ok := strings.Cut(msg, "Error while dialing: "); ok {
		msg = after
	}
	msg = strings.TrimSuffix(msg, `"`)
	if strings.HasPrefix(msg, "error reading server preface") {
		msg = "the connection was closed before the daemon spoke (" + msg + ")"
	}
	return msg
}
