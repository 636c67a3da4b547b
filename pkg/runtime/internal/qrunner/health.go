package qrunner

import (
	"fmt"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
)

// checkCaughtUp marks the controller caught up once it runs, the first
// listing of every input kind was routed, and no item is due or in
// flight: every item those listings queued ran (see observe.Health). It
// is called when an item is done and by Health, until it is caught up.
func (c *Runner) checkCaughtUp() {
	// The cheap check first: it is false while items keep coming.
	if !c.queue.Settled() || c.status.State() != status.Running {
		return
	}
	if c.cfg.InputsListed != nil && !c.cfg.InputsListed() {
		return
	}
	c.caughtUp.Store(true)
}

// Health says why the controller is not ready and why it is not live ("" when
// it is), at now, with bound the longest an item may run (see
// observe.Health): not ready while it starts or until it caught up with
// the first listing of its inputs; not live while an item has run for
// longer than bound.
func (c *Runner) Health(now time.Time, bound time.Duration) (notReady, notLive string) {
	switch c.status.State() {
	case status.Starting:
		notReady = "starting: listing its inputs"
	case status.Stopped:
	default:
		if !c.caughtUp.Load() {
			c.checkCaughtUp()
		}
		if !c.caughtUp.Load() {
			notReady = "catching up with the first listing of its inputs"
			if c.cfg.InputsListed == nil || c.cfg.InputsListed() {
				st := c.queue.Stats(activitySample)
				notReady += fmt.Sprintf(": %d %s due, %d in flight", st.Due, items(st.Due), st.InFlight)
			}
		}
	}
	var oldest int64
	for i := range c.busy {
		if s := c.busy[i].Load(); s != 0 && (oldest == 0 || s < oldest) {
			oldest = s
		}
	}
	if d := now.Sub(time.Unix(0, oldest)); oldest != 0 && d > bound {
		st := c.queue.Stats(activitySample)
		var items []string
		for _, it := range st.Sample[:st.SampleInFlight] {
			items = append(items, it.What())
		}
		notLive = fmt.Sprintf("stuck in one item for %s (the health bound is %s); in flight: %s",
			d.Round(time.Millisecond), bound, strings.Join(items, ", "))
	}
	return notReady, notLive
}

// items is the noun of a count of n items.
func items(n int) string {
	if n == 1 {
		return "item"
	}
	return "items"
}
