package runtime

import (
	"cmp"
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
)

func init() {
	testhook.Of = func(engine any) testhook.Hooks {
		if r, ok := engine.(*Runtime); ok && r != nil {
			return hooks{r}
		}
		return nil
	}
	testhook.WithScheduler = func(s sched.Scheduler) any { return withScheduler(s) }
}

// hooks are the Runtime's quiescence checks, for the test kit (see
// package internal/testhook).
type hooks struct{ r *Runtime }

func (h hooks) Activity(ctx context.Context) observe.Activity { return h.r.activity(ctx) }

func (h hooks) WaitIdle(ctx context.Context, except []string) (observe.Activity, error) {
	return h.r.waitIdle(ctx, except)
}

// activity reports what the Runtime is doing now.
func (r *Runtime) activity(ctx context.Context) observe.Activity {
	kinds := r.kindActivity(ctx)
	return observe.Activity{Controllers: r.controllerActivity(), Kinds: kinds.list}
}

// waitIdle waits until the Runtime is idle but for the controllers named
// in except (see testhook.Hooks.WaitIdle for the contract).
//
// A Controller is seen idle from the moment it calls EventCh after taking
// its last ReconcileEvent, which a Run loop that selects on r.EventCh() in
// every iteration does before it waits again. A Controller that keeps the
// channel from one EventCh call is seen busy after its first event; one
// that hands its events to another goroutine is seen idle once the
// handing-over loop calls EventCh again, whether or not the other
// goroutine is done. A Controller whose dynamic inputs gained a kind is
// busy until the wake-up that follows that kind's first bootstrap is sent
// (crunner.Runner.DeferWakeUp). A state whose whole-kind watches may
// coalesce changes
// into nothing (inmem does, for a resource created and destroyed while a
// watch that fell far behind catches up) leaves that kind seen behind
// until its next change. A Runtime whose Run has not started yet is not
// idle, whatever except names: its controllers are starting and its
// kinds are not watched yet, so that a change made now would reach no
// watch's bootstrap if the wait returned (Run pings the notifier once it
// has started the watches).
func (r *Runtime) waitIdle(ctx context.Context, except []string) (observe.Activity, error) {
	ch, release := r.idle.Subscribe()
	defer release()
	for {
		before := r.kindActivity(ctx)
		ctrls := r.controllerActivity()
		after := r.kindActivity(ctx)
		a := observe.Activity{Controllers: ctrls, Kinds: after.list}
		if before.started && idleExcept(a, except) && (observe.Activity{Kinds: before.list}).Idle() && slices.Equal(before.routed, after.routed) {
			return a, nil
		}
		select {
		case <-ch:
			ch = r.idle.Renew()
		case <-ctx.Done():
			// Report what is busy now, not at the last notification.
			return r.activity(context.WithoutCancel(ctx)), ctx.Err()
		}
	}
}

// idleExcept reports whether a is idle but for the controllers named.
func idleExcept(a observe.Activity, names []string) bool {
	if len(names) == 0 {
		return a.Idle()
	}
	rest := observe.Activity{Kinds: a.Kinds}
	for _, c := range a.Controllers {
		if !slices.Contains(names, c.Name) {
			rest.Controllers = append(rest.Controllers, c)
		}
	}
	return rest.Idle()
}

// kindActivities are the kinds' activity and, in the same order, how many
// batches each has routed; started tells that Run has started (the
// watches of the kinds registered before it are running or have run).
type kindActivities struct {
	list    []observe.KindActivity
	routed  []uint64
	started bool
}

func (r *Runtime) kindActivity(ctx context.Context) kindActivities {
	r.mu.Lock()
	phase := r.phase
	r.mu.Unlock()
	kinds := r.router.Activity(ctx, phase == phaseRunning)
	out := kindActivities{
		list:    make([]observe.KindActivity, 0, len(kinds)),
		routed:  make([]uint64, 0, len(kinds)),
		started: phase != phaseIdle,
	}
	for _, k := range kinds {
		out.list = append(out.list, observe.KindActivity{
			Namespace: k.Key.Namespace(), Type: k.Key.Type(), Behind: k.Behind, Exact: k.Exact, Why: k.Why,
		})
		out.routed = append(out.routed, k.Routed)
	}
	return out
}

func (r *Runtime) controllerActivity() []observe.ControllerActivity {
	runners := r.runnerList()
	out := make([]observe.ControllerActivity, 0, len(runners))
	for _, rn := range runners {
		out = append(out, rn.activity())
	}
	slices.SortFunc(out, func(a, b observe.ControllerActivity) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// newControllerActivity is a runner's activity as the public type says it.
func newControllerActivity(name string, fam observe.Family, a status.Activity) observe.ControllerActivity {
	return observe.ControllerActivity{
		Name: name, Family: fam, Busy: a.Busy, Why: a.Why,
		Due: a.Due, InFlight: a.InFlight, Delayed: a.Delayed, NextDue: a.NextDue,
	}
}
