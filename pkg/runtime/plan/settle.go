package plan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
)

// quiet is how long a plan's Runtime must stay idle, committing nothing,
// to be at its fixed point: longer than its longest retry (planBackoffMax),
// so that a timer of the Runtime's or of user code that fires meanwhile
// is seen.
const quiet = 5 * planBackoffMax

// settle runs the daemon to its fixed point (rule PL3): idle, no retry or
// requeue due later, its world quiet (System.Quiet), and committing
// nothing for a quiet period. It returns "" then, or why not: a hot
// loop flagged, more commits after mark than the bound, work left when
// the time is up.
func (r *run) settle(ctx context.Context, mark uint64) string {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.timeout)
	defer cancel()
	ring := r.rt.Observe().Trace()
	for {
		act, err := r.waitIdle(ctx, mark)
		if why := r.stuck(ring, mark); why != "" {
			return why
		}
		if err != nil {
			return fmt.Sprintf("still working after %v:\n%s", r.cfg.timeout, act)
		}
		wait := quiet
		if next := nextDue(act); !next.IsZero() {
			wait = max(time.Until(next), 0) + planBackoff
		}
		last := ring.Last()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Sprintf("still working after %v: %s", r.cfg.timeout, r.busy(act))
		case <-t.C:
		}
		// The world first: an observer's pass that ended before it says
		// quiet committed its writes, which the Runtime's activity and
		// the trace then show.
		if r.worldQuiet() {
			if a := r.rt.Observe().Activity(ctx); a.Idle() && nextDue(a).IsZero() && ring.Last() == last {
				return ""
			}
		}
	}
}

// checkEvery is how often a busy plan looks for a hot loop or too many
// commits while it waits for its Runtime to be idle.
const checkEvery = 100 * time.Millisecond

// waitIdle waits until the Runtime is idle or ctx is done, returning
// every checkEvery to let the caller look at what it is doing.
func (r *run) waitIdle(ctx context.Context, mark uint64) (observe.Activity, error) {
	for {
		wctx, cancel := context.WithTimeout(ctx, checkEvery)
		act, err := testhook.Of(r.rt).WaitIdle(wctx, nil)
		cancel()
		if err == nil || ctx.Err() != nil {
			return act, err
		}
		if why := r.stuck(r.rt.Observe().Trace(), mark); why != "" {
			return act, nil
		}
	}
}

// stuck says why the daemon will not converge: a hot loop the Runtime
// flags, or more commits since mark than the bound.
func (r *run) stuck(ring *trace.Ring, mark uint64) string {
	if loops := r.rt.Observe().HotLoops(); len(loops) > 0 {
		var cycles []string
		for _, l := range loops {
			cycles = append(cycles, fmt.Sprintf("%s (%.0f commits/s)", l.Cycle, l.Rate))
		}
		return "hot loop: " + strings.Join(cycles, "; ")
	}
	n := 0
	ring.Visit(mark, func(e *trace.Record) {
		if e.Type == trace.Commit {
			n++
		}
	})
	if n > r.cfg.commits {
		return fmt.Sprintf("more than %d commits after the change: the daemon does not reach a fixed point", r.cfg.commits)
	}
	return ""
}

// worldQuiet reports whether the System's world is quiet (System.Quiet).
func (r *run) worldQuiet() bool { return r.sys.Quiet == nil || r.sys.Quiet() }

// busy says what keeps the daemon from its fixed point: the controllers
// with delayed work, and the world when it is not quiet.
func (r *run) busy(act observe.Activity) string {
	if r.worldQuiet() {
		return delayed(act)
	}
	return delayed(act) + "; the world: its observers have not handled all it told them"
}

// nextDue is when the earliest delayed work of act is due (zero: none).
func nextDue(act observe.Activity) time.Time {
	var next time.Time
	for _, c := range act.Controllers {
		if !c.NextDue.IsZero() && (next.IsZero() || c.NextDue.Before(next)) {
			next = c.NextDue
		}
	}
	return next
}

// delayed names the controllers with delayed work.
func delayed(act observe.Activity) string {
	var out []string
	for _, c := range act.Controllers {
		if c.Busy || !c.NextDue.IsZero() {
			out = append(out, c.Name+": "+c.Why)
		}
	}
	if len(out) == 0 {
		return act.String()
	}
	return strings.Join(out, "; ")
}

// settleRemoval settles the daemon after ptr was torn down, destroying
// it once its finalizers are gone; it says so when the daemon settles with
// them still there.
func (r *run) settleRemoval(ctx context.Context, mark uint64, ptr resource.Pointer) string {
	for {
		if why := r.settle(ctx, mark); why != "" {
			return why
		}
		cur, err := r.st.Get(ctx, ptr)
		switch {
		case err != nil:
			return "" // gone
		case len(*cur.Metadata().Finalizers()) > 0:
			return fmt.Sprintf("the daemon settled without letting go of what the change removes: %s keeps finalizers %v",
				resource.PointerString(ptr), []resource.Finalizer(*cur.Metadata().Finalizers()))
		}
		if err := r.st.Destroy(ctx, ptr); err != nil {
			return fmt.Sprintf("destroy %s: %v", resource.PointerString(ptr), err)
		}
	}
}
