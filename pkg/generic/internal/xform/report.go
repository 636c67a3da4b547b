package xform

import (
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// noStack keeps a logger from attaching stack traces of its own (zap's
// development preset adds them from WARN up): a retried failure is not a
// crash. A panic's stack is logged where the panic was recovered (Call).
var noStack = zap.AddStacktrace(zap.LevelEnablerFunc(func(zapcore.Level) bool { return false }))

// RetryLogger returns the logger of [RetryLater].
func RetryLogger(logger *zap.Logger) *zap.Logger { return logger.WithOptions(noStack) }

// RetryLater reports the failure err of one item, the resource ptr (an
// "input" or an "output", says what), retried after delay: it logs it at
// WARN on logger (a [RetryLogger]), with the item's pointer, the delay and
// the count of consecutive failures, and reports it to the engine when r
// implements controller.ErrorReporter. failures 0 is a plain requeue (a
// controller.RequeueError wrapping no error): logged at DEBUG, not
// reported.
func RetryLater(logger *zap.Logger, r any, what string, ptr resource.Pointer, err error, delay time.Duration, failures int) {
	fields := []zap.Field{zap.String(what, resource.PointerString(ptr)), zap.Duration("retry_in", delay)}
	if failures == 0 {
		logger.Debug(what+" requeued", fields...)
		return
	}
	text := usercode.ErrorText(err)
	logger.Warn(what+" failed; retrying after backoff", append(fields, zap.Int("failures", failures), zap.String("error", text))...)
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
