package runtime

import (
	"math"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/state"
)

// retryPolicy returns the policy with which the controller ctrl, named
// name, of family fam retries its failing items: the Runtime's item
// backoff ([WithQueueBackoff]), overridden by what a
// [controller.RetryPolicyProvider] returns. A QController's queue applies
// it (rule Q3); a Controller that retries its own items (the generic
// transform and cleanup controllers) finds it in its Run context. A policy
// that cannot work, or a RetryPolicy method that panics, is an
// invalid-class registration error naming the controller.
func (r *Runtime) retryPolicy(fam dependency.Family, name string, ctrl any) (rp retry.Policy, err error) {
	rp.Backoff = retry.Backoff{Initial: r.opts.queueBackoffInitial, Max: r.opts.queueBackoffMax}
	p, ok := ctrl.(controller.RetryPolicyProvider)
	if !ok {
		return rp, nil
	}
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
	own := retry.Backoff{Initial: pol.BackoffInitial, Max: pol.BackoffMax}
	if own.Initial < 0 || own.Max < 0 {
		return rp, state.NewInvalidError(nil, "register %s %q: RetryPolicy: negative backoff (initial %v, max %v)", fam, name, pol.BackoffInitial, pol.BackoffMax)
	}
	if own.Initial > 0 {
		rp.Backoff.Initial = own.Initial
	}
	if own.Max > 0 {
		rp.Backoff.Max = own.Max
	}
	if err := rp.Backoff.Validate(); err != nil {
		return rp, state.NewInvalidError(nil, "register %s %q: RetryPolicy: %v", fam, name, err)
	}
	rp.MaxAttempts = uint32(min(pol.MaxAttempts, math.MaxUint32))
	rp.ChangeAbandonsRetry = pol.ChangeAbandonsRetry
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
