package runtime

import (
	"context"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/observe/histogram"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// explainItems bounds the QController items an explanation lists.
const explainItems = 16

// explain answers "why is this resource (not) reconciled" (see
// observe.Observer.Explain): it reads the resource from the state, takes a
// snapshot of the trace and of every controller's state, and guesses the
// missing inputs of a resource that does not exist. With the trace off,
// the answer has no history and says so.
func (r *Runtime) explain(ctx context.Context, ptr resource.Pointer) (explain.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return explain.Resource{}, err
	}
	key := resource.PointerOf(ptr)
	f := r.facts(ctx)
	rf := explain.ResourceFacts{Ref: trace.Ref{Namespace: key.Namespace(), Type: key.Type(), ID: key.ID()}}
	res, err := r.st.Get(ctx, key)
	switch {
	case err == nil:
		md := res.Metadata()
		rf.Exists, rf.Version, rf.Phase, rf.Owner = true, md.Version().Value(), md.Phase().String(), md.Owner()
		rf.Finalizers = append([]string(nil), (*md.Finalizers())...)
	case state.IsNotFoundError(err):
		rf.Missing = r.missingInputs(ctx, &f, key)
	default:
		rf.Notes = append(rf.Notes, "the state could not be read: "+err.Error())
	}
	return explain.BuildResource(&f, rf), nil
}

// explainController explains the controller name from its side (see
// observe.Observer.ExplainController).
func (r *Runtime) explainController(ctx context.Context, name string) (explain.Controller, error) {
	f := r.facts(ctx)
	c, ok := explain.BuildController(&f, name)
	if !ok {
		return explain.Controller{}, state.NewNotFoundError(nil, "no controller %q", name)
	}
	return c, nil
}

// facts gathers what the Runtime knows now, for an explanation.
func (r *Runtime) facts(ctx context.Context) explain.Facts {
	f := explain.Facts{Now: time.Now()}
	if g, err := r.GetDependencyGraph(); err == nil {
		families := map[string]string{}
		for _, st := range r.controllerStatuses() {
			families[st.Name] = st.Family.String()
		}
		for _, e := range g.Edges {
			f.Edges = append(f.Edges, explain.Edge{Controller: e.ControllerName, Family: families[e.ControllerName],
				EdgeType: e.EdgeType.String(), Namespace: e.ResourceNamespace, Type: e.ResourceType, ID: e.ResourceID, NoWriter: e.NoWriter, OutsideWriter: e.OutsideWriter})
		}
	}
	acts := map[string]observe.ControllerActivity{}
	for _, a := range r.controllerActivity() {
		acts[a.Name] = a
	}
	for _, st := range r.controllerStatuses() {
		a, m := acts[st.Name], &st.Metrics
		cf := explain.ControllerFacts{
			Name: st.Name, Family: st.Family.String(), Lifecycle: st.Lifecycle.String(), RestartAt: st.BackoffUntil,
			LastError: st.LastError, LastErrorAt: st.LastErrorAt,
			Busy: a.Busy, Why: a.Why, Due: a.Due, InFlight: a.InFlight, Delayed: a.Delayed, NextDue: a.NextDue,
			Running:  a.InFlight > 0 || (st.Family == observe.FamilyController && st.Lifecycle == observe.LifecycleRunning && a.Busy),
			Counters: explain.Counters{Reconciles: m.Reconciles, Crashes: m.Crashes, Restarts: m.Restarts, WakeUps: m.WakeUps, Requeues: m.Requeues, QueueLen: st.QueueLen, InFlight: st.InFlight},
			Latencies: map[string]explain.Latency{
				"queueWait": latencyOf(m.QueueWait),
				"lag":       latencyOf(m.Lag),
				"startup":   latencyOf(m.Startup),
				"duration":  latencyOf(allOutcomes(m.Duration)),
			},
			HotLoop: st.HotLoop,
		}
		leadershipFacts(&cf, st.Leadership)
		cf.Items = r.explainItems(st.Name)
		f.Controllers = append(f.Controllers, cf)
	}
	if ring := r.tel.Ring; ring != nil {
		f.Records, f.TraceSize = ring.Snapshot(), ring.Size()
	}
	return f
}

// explainItems lists a QController's items in flight and due, and those
// parked.
func (r *Runtime) explainItems(name string) []explain.Item {
	r.mu.Lock()
	rn := r.runners[name]
	r.mu.Unlock()
	q, ok := rn.(*qcontrollerRunner)
	if !ok {
		return nil
	}
	items, inFlight := q.r.Items(explainItems)
	out := make([]explain.Item, 0, len(items))
	for i, it := range items {
		e := explain.Item{Item: trace.Ref{Namespace: it.Ptr.Namespace(), Type: it.Ptr.Type(), ID: it.Ptr.ID()}, Op: "reconcile", Work: explain.WorkQueued}
		if it.Map {
			e.Op = "map"
		}
		if i < inFlight {
			e.Work = explain.WorkRunning
		}
		out = append(out, e)
	}
	parked, _ := q.r.Parked(explainItems)
	for _, p := range parked {
		e := explain.Item{Item: trace.Ref{Namespace: p.Key.Ptr.Namespace(), Type: p.Key.Ptr.Type(), ID: p.Key.Ptr.ID()}, Op: "reconcile",
			Work: explain.WorkParked, Attempt: int(p.Attempts), Error: p.Err}
		if p.Key.Map {
			e.Op = "map"
		}
		out = append(out, e)
	}
	return out
}

// missingInputs guesses, for a resource that does not exist, which input
// each of its writers would write it from and that does not exist either:
// an input limited to one ID, or a QController's primary input of the same
// ID.
func (r *Runtime) missingInputs(ctx context.Context, f *explain.Facts, key resource.PointerKey) map[string]trace.Ref {
	writers := map[string]bool{}
	for _, e := range f.Edges {
		if e.Type == key.Type() && (e.EdgeType == controller.EdgeOutputExclusive.String() || e.EdgeType == controller.EdgeOutputShared.String()) {
			writers[e.Controller] = true
		}
	}
	out := map[string]trace.Ref{}
	for _, e := range f.Edges {
		if !writers[e.Controller] || e.Namespace == "" {
			continue
		}
		id := e.ID
		if id == "" && e.EdgeType == controller.EdgeInputQPrimary.String() {
			id = key.ID()
		}
		if id == "" {
			continue
		}
		if _, ok := out[e.Controller]; ok {
			continue
		}
		in := resource.PointerOf(resource.NewPointer(e.Namespace, e.Type, id))
		if _, err := r.st.Get(ctx, in); state.IsNotFoundError(err) {
			out[e.Controller] = trace.Ref{Namespace: in.Namespace(), Type: in.Type(), ID: in.ID()}
		}
	}
	return out
}

func latencyOf(s histogram.Snapshot) explain.Latency {
	return explain.Latency{Count: s.Count, P50: s.Quantile(0.5), P99: s.Quantile(0.99)}
}

func allOutcomes(m map[string]histogram.Snapshot) histogram.Snapshot {
	var s histogram.Snapshot
	for _, h := range m {
		s = s.Add(h)
	}
	return s
}
