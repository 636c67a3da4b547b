package outcome

import (
	"go.uber.org/zap"
)

// LogParked writes the log line about the outcome o of call (a failure or a
// panic, decided as d) that parked its item after attempts consecutive
// failed runs (a QController's RetryPolicy.MaxAttempts), or at once (an
// access denial): "<call> failed; parked until the item changes" (error,
// attempts), "<call> was denied access; ..." (error, attempts), or
// "<call> panicked; ..." (panic, attempts, stack), at d's level.
func LogParked(logger *zap.Logger, call Call, o Outcome, d Decision, attempts uint32, fields ...zap.Field) {
	w := callWords[call]
	msg := w.failed
	fields = append(fields, zap.Uint32("attempts", attempts))
	if o.Class == Denied {
		msg = w.denied
	}
	if o.Class == Panicked {
		msg = w.panicked
		fields = append(fields, zap.String("panic", o.Msg), StackField(o.Panic))
	} else {
		fields = append(fields, zap.String("error", o.Msg))
	}
	if ce := logger.Check(d.Level, msg+"; parked until the item changes"); ce != nil {
		ce.Write(fields...)
	}
}
