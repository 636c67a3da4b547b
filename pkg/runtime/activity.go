package runtime

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/status"
)

// Activity is what an engine is doing at one instant: for every controller
// whether it has work it has not finished, and for every watched kind
// whether its watch is behind the state. See [Runtime.Activity] and
// [Runtime.WaitIdle].
type Activity struct {
	// Controllers are sorted by name.
	Controllers []ControllerActivity
	// Kinds are sorted by namespace and type.
	Kinds []KindActivity
}

// ControllerActivity is one controller's part of an [Activity].
type ControllerActivity struct {
	Name string
	Kind string // KindController or KindQController
	// Busy is set when the controller has work it has not finished: a
	// Controller that is starting, has a ReconcileEvent (or a wake-up)
	// not yet taken, or took one and has not come back to EventCh since;
	// a QController that is starting (Run has not started it yet, or it
	// is filling its queue) or has an item due or in flight. Before Run,
	// every controller is starting. A Controller waiting
	// out its restart backoff and a QController item waiting out its
	// backoff or requeue interval are not busy (they are not due).
	Busy bool
	// Why says what the controller is doing when busy, or what it waits
	// for (a restart, delayed items) when not.
	Why string
	// Due, InFlight and Delayed count a QController's queued items.
	Due, InFlight, Delayed int
	// NextDue is when the earliest delayed item (or a Controller's
	// restart) is due; zero when none is.
	NextDue time.Time
}

// KindActivity is one watched kind's part of an [Activity].
type KindActivity struct {
	Namespace resource.Namespace
	Type      resource.Type
	// Behind is set while the kind's watch has not routed every change
	// to the controllers: it has not bootstrapped yet, is being
	// re-established after a failure, is routing a batch, or (when Exact)
	// has routed up to an older change than the state's newest.
	Behind bool
	// Exact is set when the state reports the kind's newest change
	// ([state.KindHeadReporter]), so that Behind also covers changes the
	// state has committed but not yet delivered to the watch.
	Exact bool
	// Why says how the watch is behind.
	Why string
}

// Idle reports whether no controller is busy and no kind watch is behind.
func (a Activity) Idle() bool {
	for i := range a.Controllers {
		if a.Controllers[i].Busy {
			return false
		}
	}
	for i := range a.Kinds {
		if a.Kinds[i].Behind {
			return false
		}
	}
	return true
}

// String lists the busy controllers and the kinds whose watch is behind,
// one per line, or says that the engine is idle.
func (a Activity) String() string {
	var b strings.Builder
	for _, c := range a.Controllers {
		if c.Busy {
			fmt.Fprintf(&b, "controller %s: %s\n", c.Name, c.Why)
		}
	}
	for _, k := range a.Kinds {
		if k.Behind {
			fmt.Fprintf(&b, "watch of %s(%s): %s\n", k.Type, k.Namespace, k.Why)
		}
	}
	if b.Len() == 0 {
		return "idle"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Activity reports what the engine is doing now (see [Activity]). ctx
// bounds the calls to the state's [state.KindHeadReporter]. It is meant
// for tests and diagnostics: it takes locks and scans queues.
func (r *Runtime) Activity(ctx context.Context) Activity {
	kinds := r.kindActivity(ctx)
	return Activity{Controllers: r.controllerActivity(), Kinds: kinds.list}
}

// WaitIdle waits until the engine is idle and returns nil, or returns the
// last [Activity] it saw with ctx's error when ctx is done first. Idle
// means: every kind watch has routed every change (with a state that
// implements [state.KindHeadReporter], every change the state committed;
// otherwise every change the state delivered to the watch), no Controller
// is busy (see [ControllerActivity.Busy]) and no QController item is due
// or in flight — checked so that no work can move between the parts
// checked: the kinds are checked before and after the controllers and
// must not have routed anything in between. It waits for the engine's own
// notifications, never by polling.
//
// A Controller is seen idle from the moment it calls EventCh after taking
// its last ReconcileEvent, which a Run loop that selects on r.EventCh() in
// every iteration does before it waits again. A Controller that keeps the
// channel from one EventCh call is seen busy after its first event; one
// that hands its events to another goroutine is seen idle once the
// handing-over loop calls EventCh again, whether or not the other
// goroutine is done. A state whose whole-kind watches may coalesce changes
// into nothing (inmem does, for a resource created and destroyed while a
// watch that fell far behind catches up) leaves that kind seen behind until
// its next change.
//
// An engine whose Run has not started yet is not idle: its controllers
// are starting.
func (r *Runtime) WaitIdle(ctx context.Context) (Activity, error) {
	return r.WaitIdleExcept(ctx)
}

// WaitIdleExcept is [Runtime.WaitIdle] leaving out the controllers named:
// they count as idle whatever they do, and everything else must be idle
// as WaitIdle says. It is for a test that holds some controllers on
// purpose — a pass or a reconcile blocked until the test lets it go —
// while it waits for the rest of the engine (every change routed, the
// other controllers done); a held controller must not be doing anything
// but waiting, or the wait means nothing. The Activity returned shows
// every controller as it is.
func (r *Runtime) WaitIdleExcept(ctx context.Context, names ...string) (Activity, error) {
	ch, release := r.idle.Subscribe()
	defer release()
	for {
		before := r.kindActivity(ctx)
		ctrls := r.controllerActivity()
		after := r.kindActivity(ctx)
		a := Activity{Controllers: ctrls, Kinds: after.list}
		if idleExcept(a, names) && (Activity{Kinds: before.list}).Idle() && slices.Equal(before.routed, after.routed) {
			return a, nil
		}
		select {
		case <-ch:
			ch = r.idle.Renew()
		case <-ctx.Done():
			// Report what is busy now, not at the last notification.
			return r.Activity(context.WithoutCancel(ctx)), ctx.Err()
		}
	}
}

// idleExcept reports whether a is idle but for the controllers named.
func idleExcept(a Activity, names []string) bool {
	if len(names) == 0 {
		return a.Idle()
	}
	rest := Activity{Kinds: a.Kinds}
	for _, c := range a.Controllers {
		if !slices.Contains(names, c.Name) {
			rest.Controllers = append(rest.Controllers, c)
		}
	}
	return rest.Idle()
}

// kindActivities are the kinds' activity and, in the same order, how many
// batches each has routed.
type kindActivities struct {
	list   []KindActivity
	routed []uint64
}

func (r *Runtime) kindActivity(ctx context.Context) kindActivities {
	r.mu.Lock()
	running := r.phase == phaseRunning
	r.mu.Unlock()
	kinds := r.router.Activity(ctx, running)
	out := kindActivities{list: make([]KindActivity, 0, len(kinds)), routed: make([]uint64, 0, len(kinds))}
	for _, k := range kinds {
		out.list = append(out.list, KindActivity{
			Namespace: k.Key.Namespace(), Type: k.Key.Type(), Behind: k.Behind, Exact: k.Exact, Why: k.Why,
		})
		out.routed = append(out.routed, k.Routed)
	}
	return out
}

func (r *Runtime) controllerActivity() []ControllerActivity {
	r.mu.Lock()
	runners := make([]runner, 0, len(r.runners))
	for _, rn := range r.runners {
		runners = append(runners, rn)
	}
	r.mu.Unlock()
	out := make([]ControllerActivity, 0, len(runners))
	for _, rn := range runners {
		out = append(out, rn.activity())
	}
	slices.SortFunc(out, func(a, b ControllerActivity) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// newControllerActivity is a runner's activity as the public type says it.
func newControllerActivity(name, kind string, a status.Activity) ControllerActivity {
	return ControllerActivity{
		Name: name, Kind: kind, Busy: a.Busy, Why: a.Why,
		Due: a.Due, InFlight: a.InFlight, Delayed: a.Delayed, NextDue: a.NextDue,
	}
}
