package runtime

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Observe returns the Runtime's [observe.Observer]: every controller's
// status (its state, last error and recovery, its queue and failing items,
// tracked with metrics off too) and metrics, every watched kind's counters,
// the Runtime's activity, its hot loops, its causal trace and explanations
// ("why is this resource (not) reconciled"). Debug pages (package
// debughttp), exporters and tests take the Observer; observe.PublishExpvar
// publishes its metrics to expvar under a name of the caller's choosing. It
// may be called at any time; every Observer of one Runtime reports the same
// Runtime.
//
// Each Runtime keeps its own counters (two Runtimes never share any; nothing
// is registered globally): cheap atomics and latency histograms (fixed
// log-scale buckets, recorded without locks or allocation), on by default,
// skipped with WithMetrics(false).
//
// The Runtime records what it does in a bounded, always-on causal trace
// (sized by [WithTrace], trace.DefaultSize records by default, 0 = off):
// each commit with its writer, each change routed to a controller, each
// reconcile's start with the changes that caused it and its end,
// QController retries and requeues with their due times, crashes, restarts
// and finalizer waits. [WithTraceHook] streams it out. A running Runtime
// reads it every 100 ms to detect hot loops: a controller re-triggered
// mostly by its own writes, or controllers that keep rewriting each other's
// inputs, at a sustained rate (see package observe/hotloop for the
// defaults, [WithHotLoop] to tune them). A loop is logged at WARN (its
// controllers, resources and cycle), listed by the Observer, and flagged in
// each of its controllers' status.
//
// The Observer is also an [observe.HealthReporter]: whether the Runtime is
// ready and live, with every check that fails (observe.HealthOf; see
// observe.Health and [WithHealthBound]). It reads the controllers' statuses
// and the kind watches' progress, and asks the state nothing.
func (r *Runtime) Observe() observe.Observer { return observer{r} }

// observer is the Observer of a Runtime.
type observer struct{ r *Runtime }

var (
	_ observe.Observer       = observer{}
	_ observe.HealthReporter = observer{}
)

// Health implements [observe.HealthReporter] (see observe.Health).
func (o observer) Health() observe.Health { return o.r.health() }

func (o observer) Controllers() []observe.ControllerStatus { return o.r.controllerStatuses() }

func (o observer) Metrics() observe.Metrics { return o.r.metrics() }

func (o observer) HotLoops() []observe.HotLoop { return o.r.hotLoops() }

func (o observer) Activity(ctx context.Context) observe.Activity { return o.r.activity(ctx) }

func (o observer) Graph() (*controller.DependencyGraph, error) {
	return o.r.GetDependencyGraph()
}

func (o observer) Trace() *trace.Ring { return o.r.tel.Ring }

func (o observer) Explain(ctx context.Context, ptr resource.Pointer) (explain.Resource, error) {
	return o.r.explain(ctx, ptr)
}

func (o observer) ExplainController(ctx context.Context, name string) (explain.Controller, error) {
	return o.r.explainController(ctx, name)
}
