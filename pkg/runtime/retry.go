package runtime

import (
	"math"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/state"
)

// retryPolicy is a QController's controller.RetryPolicy resolved against the
// engine's options: the backoff bounds to use, the attempts before an item
// is parked (0: never), and whether a change abandons a retry.
type retryPolicy struct {
	backoffInitial, backoffMax time.Duration
	maxAttempts                uint32
	changeAbandonsRetry        bool
}

// qcontrollerRetry returns the retry policy of the QController ctrl, named
// name: the engine's defaults, overridden by what a
// [controller.RetryPolicyProvider] returns. A policy that cannot work, or a
// RetryPolicy method that panics, is an invalid-class registration error
// naming the controller.
func (r *Runtime) qcontrollerRetry(name string, ctrl controller.QController) (rp retryPolicy, err error) {
	rp = retryPolicy{backoffInitial: r.opts.queueBackoffInitial, backoffMax: r.opts.queueBackoffMax}
	p, ok := ctrl.(controller.RetryPolicyProvider)
	if !ok {
		return rp, nil
	}
	fam := dependency.FamilyQController
	var pol controller.RetryPolicy
	func() {
		defer func() {
			if pv := usercode.Recovered(recover()); pv != nil {
				msg := usercode.Sprint(pv.Value)
				outcome.EngineLogger(r.logger).Error("controller RetryPolicy panicked", zap.Stringer("register", fam),
					zap.String("controller", name), zap.String("panic", msg), outcome.StackField(pv))
				err = state.NewInvalidError(nil, "register %s %q: RetryPolicy panicked: %s", fam, name, msg)
			}
		}()
		pol = p.RetryPolicy()
	}()
	if err != nil {
		return rp, err
	}
	if pol.BackoffInitial < 0 || pol.BackoffMax < 0 {
		return rp, state.NewInvalidError(nil, "register %s %q: RetryPolicy: negative backoff (initial %v, max %v)", fam, name, pol.BackoffInitial, pol.BackoffMax)
	}
	if pol.BackoffInitial > 0 {
		rp.backoffInitial = pol.BackoffInitial
	}
	if pol.BackoffMax > 0 {
		rp.backoffMax = pol.BackoffMax
	}
	if rp.backoffMax < rp.backoffInitial {
		return rp, state.NewInvalidError(nil, "register %s %q: RetryPolicy: backoff max %v is below its initial delay %v", fam, name, rp.backoffMax, rp.backoffInitial)
	}
	rp.maxAttempts = uint32(min(pol.MaxAttempts, math.MaxUint32))
	rp.changeAbandonsRetry = pol.ChangeAbandonsRetry
	return rp, nil
}

// maxParkedListed bounds the parked items a status lists.
const maxParkedListed = 32

// parkedStatus fills st's parked items from c.
func (c *qcontrollerRunner) parkedStatus(st *observe.ControllerStatus) {
	items, total := c.r.Parked(maxParkedListed)
	st.ParkedItems = total
	for _, p := range items {
		st.Parked = append(st.Parked, observe.ParkedItem{Item: p.Key.What(), Attempts: uint(p.Attempts), LastError: p.Err, ParkedAt: p.At})
	}
}
