package xform

import (
	"fmt"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// noStack keeps a logger from attaching stack traces of its own (zap's
// development preset adds them from WARN up): a retried failure is not a
// crash. A panic's stack is logged where the panic was recovered (Call).
var noStack = zap.AddStacktrace(zap.LevelEnablerFunc(func(zapcore.Level) bool { return false }))

// RetryLogger returns the logger of [RetryLater].
func RetryLogger(logger *zap.Logger) *zap.Logger { return logger.WithOptions(noStack) }

// RetryLater reports the failure err of one item, the resource ptr (an
// "input" or an "output", says what), that rt (from [Retries.Failed])
// retries: it logs it at WARN on logger (a [RetryLogger]; an access denial
// parked, a programming error, at ERROR), with the item's
// pointer, the delay (or that it is parked until it changes) and the count
// of consecutive failed runs, and reports it to the Runtime when r
// implements controller.ErrorReporter. A plain requeue (a
// controller.RequeueError wrapping no error) is logged at DEBUG, not
// reported.
func RetryLater(logger *zap.Logger, r any, what string, ptr resource.Pointer, err error, rt Retry) {
	fields := []zap.Field{zap.String(what, resource.PointerString(ptr))}
	if !rt.Parked {
		fields = append(fields, zap.Duration("retry_in", rt.Delay))
	}
	if !rt.Failure {
		logger.Debug(what+" requeued", fields...)
		return
	}
	fields = append(fields, zap.Uint32("failures", rt.Attempts), zap.String("error", usercode.ErrorText(err)))
	msg := what + " failed; retrying after backoff"
	switch {
	case rt.Denied && rt.Parked:
		// A programming error, not a transient failure.
		logger.Error(what+" was denied access; parked until it changes", fields...)
	case rt.Parked:
		logger.Warn(what+" failed; parked until it changes", fields...)
	default:
		logger.Warn(msg, fields...)
	}
	if rep, ok := r.(controller.ErrorReporter); ok {
		rep.ReportError(Named(what, ptr, err))
	}
}

// Named wraps err with what and the resource ptr, "what ptr: err", or only
// with what when err's text names ptr already: a failure names its
// resource once.
func Named(what string, ptr resource.Pointer, err error) error {
	name := resource.PointerString(ptr)
	if strings.Contains(usercode.ErrorText(err), name) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}
