package observe

import (
	"context"
	"expvar"
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Observer is what a Runtime tells about itself, for debug pages,
// exporters and people: resgraph's Runtime hands one out with
// runtime.Runtime.Observe. Every method is safe for concurrent use and may
// be called at any time, before, during and after the Runtime runs; every
// result is a copy the caller owns.
type Observer interface {
	// Controllers returns the status of every registered controller,
	// sorted by name.
	Controllers() []ControllerStatus
	// Metrics returns the statuses with their counters and histograms,
	// every watched kind's counters and the hot loops flagged now.
	Metrics() Metrics
	// HotLoops returns the hot loops flagged now, sorted by cycle (none
	// with the trace off: the detector reads it).
	HotLoops() []HotLoop
	// Activity reports what the Runtime is doing now: every controller's
	// work due, in flight or delayed, every watch that is behind. It takes
	// locks and scans queues (meant for diagnostics and tests); ctx bounds
	// the questions it asks the state.
	Activity(ctx context.Context) Activity
	// Graph returns the controller/resource dependency graph (the
	// Runtime's GetDependencyGraph).
	Graph() (*controller.DependencyGraph, error)
	// Trace returns the Runtime's causal trace, a ring of its newest
	// records (see package observe/trace); nil when the trace is off.
	Trace() *trace.Ring
	// Explain answers "why is this resource (not) reconciled": who writes
	// it, who reads it, its last changes in the trace with the reconciles
	// each caused, and what each of those controllers is doing about it
	// now. A failed read of the resource is noted in the answer, not an
	// error; an invalid pointer is an invalid-class error
	// (state.IsInvalidError).
	Explain(ctx context.Context, ptr resource.Pointer) (explain.Resource, error)
	// ExplainController explains a controller from its side: its inputs
	// and outputs with their writers and readers, what it is doing now,
	// its counters and latencies, its items in flight or due, its last
	// reconciles with their causes. An unknown name is a not-found-class
	// error (state.IsNotFoundError).
	ExplainController(ctx context.Context, name string) (explain.Controller, error)
}

// PublishExpvar publishes o's [Observer.Metrics] as the expvar variable
// name, computed on each read, in the JSON form [Metrics] describes.
// Nothing is published globally otherwise: the caller chooses the name (two
// Runtimes in one process take two names). It returns an error, and
// publishes nothing, for an empty name, a nil o or a name already published.
func PublishExpvar(name string, o Observer) (err error) {
	switch {
	case name == "":
		return fmt.Errorf("observe: PublishExpvar: empty name")
	case o == nil:
		return fmt.Errorf("observe: PublishExpvar %q: nil observer", name)
	case expvar.Get(name) != nil:
		return fmt.Errorf("observe: PublishExpvar: %q is already published", name)
	}
	defer func() {
		// expvar.Publish panics when another goroutine published the same
		// name since the check above.
		if p := recover(); p != nil {
			err = fmt.Errorf("observe: PublishExpvar: %q: %v", name, p)
		}
	}()
	expvar.Publish(name, expvar.Func(func() any { return o.Metrics() }))
	return nil
}
