package observe

import (
	"fmt"
	"strings"
	"time"
)

// Activity is what a Runtime is doing at one instant: for every controller
// whether it has work it has not finished, and for every watched kind
// whether its watch is behind the state.
type Activity struct {
	// Controllers are sorted by name.
	Controllers []ControllerActivity
	// Kinds are sorted by namespace and type.
	Kinds []KindActivity
}

// ControllerActivity is one controller's part of an [Activity].
type ControllerActivity struct {
	Name   string
	Family Family
	// Busy is set when the controller has work it has not finished: a
	// Controller that is starting, has a ReconcileEvent (or a wake-up)
	// not yet taken, or took one and has not come back to EventCh since;
	// a QController that is starting (Run has not started it yet, or it
	// is filling its queue) or has an item due or in flight. Before Run,
	// every controller is starting. A Controller waiting out its restart
	// backoff and a QController item waiting out its backoff or requeue
	// interval are not busy (they are not due).
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
	Namespace string
	Type      string
	// Behind is set while the kind's watch has not routed every change
	// to the controllers: it has not bootstrapped yet, is being
	// re-established after a failure, is routing a batch, or (when Exact)
	// has routed up to an older change than the state's newest.
	Behind bool
	// Exact is set when the state reports the kind's newest change
	// (state.KindHeadReporter), so that Behind also covers changes the
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
// one per line, or says that the Runtime is idle.
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
