// Package testhook links the Runtime's quiescence checks, and the points a
// simulator schedules ([Scheduler]), to the public test kit (package
// runtimetest and the packages under it) without making them methods of
// the Runtime: package runtime sets [Of] when it is initialized, and the
// test kit calls it. Nothing outside pkg/runtime can import
// it.
package testhook

import (
	"context"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
)

// Hooks are the quiescence checks of one Runtime.
type Hooks interface {
	// Activity reports what the Runtime is doing now (observe.Activity):
	// every controller's work and every kind watch's progress. ctx bounds
	// the questions it asks the state (state.KindHeadReporter).
	Activity(ctx context.Context) observe.Activity
	// WaitIdle waits until the Runtime is idle but for the controllers
	// named in except (which count as idle whatever they do) and returns
	// the Activity it saw then, or the Activity now and ctx's error when
	// ctx is done first. Idle means: every kind watch has routed every
	// change (with a state that implements state.KindHeadReporter, every
	// change the state committed; otherwise every change it delivered to
	// the watch), no Controller is busy and no QController item is due or
	// in flight (observe.ControllerActivity.Busy) — checked so that no
	// work can move between the parts checked: the kinds are checked
	// before and after the controllers and must not have routed anything
	// in between. Before Run has started, the Runtime is not idle,
	// whatever except names. It waits for the Runtime's own
	// notifications, never by polling.
	WaitIdle(ctx context.Context, except []string) (observe.Activity, error)
}

// Of returns the hooks of Runtime, a *runtime.Runtime (nil for anything
// else). Package runtime sets it in its init; it is never changed after.
var Of func(engine any) Hooks

// WithScheduler returns the runtime.Option (as an any: this package cannot
// name the type) that gives a Runtime the scheduler s at construction, the
// one seam of a simulator (package internal/sched). Package runtime sets it
// in its init; it is never changed after.
var WithScheduler func(s sched.Scheduler) any
