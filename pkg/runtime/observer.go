package runtime

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Observe returns the engine's [observe.Observer]: its controllers'
// statuses, metrics, activity, hot loops, causal trace and explanations
// (see "Observability" in the package doc). It may be called at any time;
// every Observer of one engine reports the same engine.
func (r *Runtime) Observe() observe.Observer { return engineObserver{r} }

// engineObserver is the Observer of a Runtime.
type engineObserver struct{ r *Runtime }

var _ observe.Observer = engineObserver{}

func (o engineObserver) Controllers() []observe.ControllerStatus { return o.r.controllerStatuses() }

func (o engineObserver) Metrics() observe.Metrics { return o.r.metrics() }

func (o engineObserver) HotLoops() []observe.HotLoop { return o.r.hotLoops() }

func (o engineObserver) Activity(ctx context.Context) observe.Activity { return o.r.activity(ctx) }

func (o engineObserver) Graph() (*controller.DependencyGraph, error) {
	return o.r.GetDependencyGraph()
}

func (o engineObserver) Trace() *trace.Ring { return o.r.tel.Ring }

func (o engineObserver) Explain(ctx context.Context, ptr resource.Pointer) (explain.Resource, error) {
	return o.r.explain(ctx, ptr)
}

func (o engineObserver) ExplainController(ctx context.Context, name string) (explain.Controller, error) {
	return o.r.explainController(ctx, name)
}
