package explain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// A controller's lifecycle as its status reports it
// (observe.Lifecycle's String forms), repeated here: package observe imports
// this one.
const (
	runtimeStarting = "starting"
	runtimeBackoff  = "backoff"
	runtimeStopped  = "stopped"
	runtimeParked   = "parked"
)

// Facts are what a Runtime knows at one instant, from which [BuildResource]
// and [BuildController] derive their explanations. The Runtime gathers them;
// building is a pure function of them.
type Facts struct {
	Now time.Time
	// Edges are every declared input and output (the dependency graph).
	Edges []Edge
	// Controllers are every registered controller.
	Controllers []ControllerFacts
	// Records is the trace, oldest first; TraceSize the ring's size (0: the
	// trace is off).
	Records   []trace.Record
	TraceSize int
}

// ControllerFacts are what the Runtime knows of one controller now: its
// status (observe.ControllerStatus), its activity (observe.Activity) and
// its queue.
type ControllerFacts struct {
	// Family is the controller's family: "controller" or "qcontroller".
	Name, Family string
	// Lifecycle is the controller's lifecycle ("starting", "running", "backoff",
	// "stopped"); RestartAt is when a crashed Controller restarts.
	Lifecycle   string
	RestartAt   time.Time
	LastError   string
	LastErrorAt time.Time
	// Running is set while a reconcile runs (a Controller's pass, a
	// QController's item in flight); Busy while work is due or running.
	// Why, Due, InFlight, Delayed and NextDue are the rest of the
	// Runtime's activity report.
	Running, Busy          bool
	Why                    string
	Due, InFlight, Delayed int
	NextDue                time.Time
	Counters               Counters
	Latencies              map[string]Latency
	HotLoop                string
	// Leadership is its part in its election in words, when the Runtime
	// runs with leadership; Standby is set while another replica leads
	// it (since StandbySince, in election Election).
	Leadership   string
	Standby      bool
	StandbySince time.Time
	Election     string
	// Items are a QController's items that are due, in flight or delayed
	// (a sample), with their work, due time and consecutive failures.
	Items []Item
}

// ResourceFacts are what the Runtime knows of one resource now.
type ResourceFacts struct {
	Ref        trace.Ref
	Exists     bool
	Version    uint64
	Phase      string
	Owner      string
	Finalizers []string
	// Missing maps a controller that writes the resource's type to an
	// input it would write it from and that does not exist (the Runtime's
	// guess: an input limited to an ID, or the same ID in a primary
	// input).
	Missing map[string]trace.Ref
	Notes   []string
}

// maxHistory bounds the changes and reconciles an explanation lists.
const maxHistory = 10

// BuildResource explains the resource r from the Runtime's facts: its
// writers and readers (the declared edges that cover it), its last changes
// in the trace with the reconciles each caused, and what each writer and
// reader is doing now about it.
func BuildResource(f *Facts, r ResourceFacts) Resource {
	out := Resource{
		Time: f.Now, Resource: trace.Ref{Namespace: r.Ref.Namespace, Type: r.Ref.Type, ID: r.Ref.ID},
		Exists: r.Exists, Version: r.Version, Phase: r.Phase, Owner: r.Owner, Finalizers: r.Finalizers,
		Writers: []Edge{}, Readers: []Edge{}, Controllers: []ControllerDoing{},
		Notes: slices.Clone(r.Notes),
	}
	roles := map[string][]string{}
	for _, e := range f.Edges {
		switch {
		case strings.HasPrefix(e.EdgeType, "Output") && e.Type == r.Ref.Type:
			out.Writers = append(out.Writers, e)
			roles[e.Controller] = appendRole(roles[e.Controller], "writes")
		case !strings.HasPrefix(e.EdgeType, "Output") && e.Type == r.Ref.Type && e.Namespace == r.Ref.Namespace && (e.ID == "" || e.ID == r.Ref.ID):
			out.Readers = append(out.Readers, e)
			roles[e.Controller] = appendRole(roles[e.Controller], "reads")
		}
	}
	out.Changes = Changes(f.Records, r.Ref, maxHistory)
	for _, c := range f.Controllers {
		role, ok := roles[c.Name]
		if !ok {
			continue
		}
		d := resourceDoing(f, &c, &r)
		out.Controllers = append(out.Controllers, ControllerDoing{Controller: c.Name, Family: c.Family, Role: strings.Join(role, ", "), Doing: d})
	}
	slices.SortFunc(out.Controllers, func(a, b ControllerDoing) int { return strings.Compare(a.Controller, b.Controller) })
	out.Notes = append(out.Notes, traceNotes(f)...)
	return out
}

func appendRole(roles []string, role string) []string {
	if slices.Contains(roles, role) {
		return roles
	}
	roles = append(roles, role)
	slices.Sort(roles)
	return roles
}

// resourceDoing is what controller c is doing about resource r: its item
// for r when it has one; waiting on r's finalizers when it owns r and r is
// tearing down; blocked when an input it would write r from is missing;
// otherwise what the controller as a whole is doing.
func resourceDoing(f *Facts, c *ControllerFacts, r *ResourceFacts) Doing {
	if d, ok := controllerFixedState(f, c); ok {
		return d
	}
	for _, it := range c.Items {
		if it.Item.SameResource(r.Ref) {
			return itemDoing(f, c, &it)
		}
	}
	if r.Exists && r.Owner == c.Name && r.Phase == "tearingDown" && len(r.Finalizers) > 0 {
		ref := r.Ref
		return withLoop(c, Doing{Work: WorkWaitingFinalizer, Resource: &ref, Finalizers: r.Finalizers, Since: lastFinalizerWait(f.Records, c.Name, r.Ref)})
	}
	if miss, ok := r.Missing[c.Name]; ok && !r.Exists {
		return withLoop(c, Doing{Work: WorkBlocked, Resource: &miss})
	}
	return controllerDoing(f, c)
}

// lastFinalizerWait returns when controller was last seen waiting for
// r's finalizers (zero when not in the trace).
func lastFinalizerWait(evs []trace.Record, controller string, r trace.Ref) time.Time {
	for i := len(evs) - 1; i >= 0; i-- {
		if e := &evs[i]; e.Type == trace.FinalizerWait && e.Controller == controller && e.Resource.SameResource(r) {
			return e.Time
		}
	}
	return time.Time{}
}

// controllerFixedState is the state of a controller that is not doing its
// work at all: starting, stopped, restarting after a crash, or parked.
func controllerFixedState(f *Facts, c *ControllerFacts) (Doing, bool) {
	if c.Standby {
		return Doing{Work: WorkStandby, Since: c.StandbySince, Detail: "another replica leads election " + c.Election}, true
	}
	switch c.Lifecycle {
	case runtimeStarting:
		return withLoop(c, Doing{Work: WorkStarting, Detail: c.Why}), true
	case runtimeStopped:
		return Doing{Work: WorkStopped}, true
	case runtimeParked:
		return withLoop(c, Doing{Work: WorkParked, Error: c.LastError}), true
	case runtimeBackoff:
		d := Doing{Work: WorkRestarting, Due: c.RestartAt, Error: c.LastError}
		if e := lastRecord(f.Records, c.Name, trace.Ref{}, trace.Crash); e != nil {
			d.Attempt = int(e.Attempt)
		}
		return withLoop(c, d), true
	}
	return Doing{}, false
}

// controllerDoing is what controller c as a whole is doing.
func controllerDoing(f *Facts, c *ControllerFacts) Doing {
	if d, ok := controllerFixedState(f, c); ok {
		return d
	}
	var d Doing
	switch {
	case c.Running || c.InFlight > 0:
		d = Doing{Work: WorkRunning}
		if s := lastRunning(f.Records, c.Name); s != nil {
			d.Since = s.Time
			if !s.Resource.IsZero() {
				item := s.Resource
				d.Resource = &item
			}
		}
	case c.Busy:
		d = Doing{Work: WorkQueued, Due: f.Now}
	case c.Delayed > 0:
		d = Doing{Work: WorkBackoff, Due: c.NextDue}
		if e := lastRecord(f.Records, c.Name, trace.Ref{}, trace.Backoff, trace.Requeue); e != nil {
			d.Error, d.Attempt = e.Error, int(e.Attempt)
			if !e.Resource.IsZero() {
				item := e.Resource
				d.Resource = &item
			}
		} else {
			d.Error = c.LastError
		}
	default:
		d = Doing{Work: WorkIdle}
	}
	if c.Family == "qcontroller" && (c.Due+c.InFlight+c.Delayed) > 1 {
		d.Detail = fmt.Sprintf("%d due, %d in flight, %d delayed", c.Due, c.InFlight, c.Delayed)
	}
	return withLoop(c, d)
}

// itemDoing is what controller c is doing with its item it.
func itemDoing(f *Facts, c *ControllerFacts, it *Item) Doing {
	item := it.Item
	d := Doing{Work: it.Work, Resource: &item, Due: it.Due, Attempt: it.Attempt, Error: it.Error}
	switch it.Work {
	case WorkRunning:
		if s := lastRecord(f.Records, c.Name, it.Item, trace.ReconcileStart); s != nil {
			d.Since = s.Time
		}
	case WorkBackoff:
		if e := lastRecord(f.Records, c.Name, it.Item, trace.Backoff, trace.Requeue); e != nil && d.Error == "" {
			d.Error = e.Error
			if d.Attempt == 0 {
				d.Attempt = int(e.Attempt)
			}
		}
	}
	return withLoop(c, d)
}

func withLoop(c *ControllerFacts, d Doing) Doing {
	d.HotLoop = c.HotLoop
	return d
}

// lastRecord returns the newest record of controller of one of types (about
// item, when item is not zero).
func lastRecord(evs []trace.Record, controller string, item trace.Ref, types ...trace.Type) *trace.Record {
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Controller == controller && slices.Contains(types, e.Type) && (item.IsZero() || e.Resource.SameResource(item)) {
			return e
		}
	}
	return nil
}

// lastRunning returns the start of controller's newest reconcile that has
// not ended in the trace.
func lastRunning(evs []trace.Record, controller string) *trace.Record {
	rs := Reconciles(evs, controller, 0)
	for _, r := range rs {
		if r.Outcome == "running" {
			for i := len(evs) - 1; i >= 0; i-- {
				if evs[i].Seq == r.Seq {
					return &evs[i]
				}
			}
		}
	}
	return nil
}

// traceNotes say what the trace cannot tell.
func traceNotes(f *Facts) []string {
	switch {
	case f.TraceSize == 0:
		return []string{"the trace is off: no history (runtime.WithTrace)"}
	case len(f.Records) >= f.TraceSize && len(f.Records) > 0:
		return []string{fmt.Sprintf("history from the trace's last %d records, since %s", len(f.Records), clock(f.Records[0].Time))}
	}
	return nil
}

// BuildController explains controller name from the Runtime's facts; false
// when there is no such controller.
func BuildController(f *Facts, name string) (Controller, bool) {
	i := slices.IndexFunc(f.Controllers, func(c ControllerFacts) bool { return c.Name == name })
	if i < 0 {
		return Controller{}, false
	}
	c := &f.Controllers[i]
	out := Controller{
		Time: f.Now, Name: c.Name, Family: c.Family, Doing: controllerDoing(f, c), Leadership: c.Leadership,
		LastError: c.LastError, LastErrorAt: c.LastErrorAt, Counters: c.Counters, Latencies: c.Latencies,
		Inputs: []Input{}, Outputs: []Output{}, Recent: Reconciles(f.Records, c.Name, maxHistory),
	}
	for _, it := range c.Items {
		d := itemDoing(f, c, &it)
		it.Error, it.Attempt = d.Error, d.Attempt
		out.Items = append(out.Items, it)
	}
	for _, e := range f.Edges {
		if e.Controller != name {
			continue
		}
		if strings.HasPrefix(e.EdgeType, "Output") {
			out.Outputs = append(out.Outputs, Output{Edge: e, Readers: others(f.Edges, e.Type, name, false)})
		} else {
			in := Input{Edge: e}
			if !e.NoWriter {
				in.Writers = others(f.Edges, e.Type, name, true)
			}
			out.Inputs = append(out.Inputs, in)
		}
	}
	for _, in := range out.Inputs {
		switch {
		case in.NoWriter:
			out.Notes = append(out.Notes, fmt.Sprintf("input %s: %s", kindText(in.Namespace, in.Type, in.ID), NoWriterText))
		case in.OutsideWriter:
			out.Notes = append(out.Notes, fmt.Sprintf("input %s: %s", kindText(in.Namespace, in.Type, in.ID), OutsideWriterText))
		}
	}
	out.Notes = append(out.Notes, traceNotes(f)...)
	return out, true
}

// others returns the controllers other than self with an output (writers)
// or an input (readers) of type typ, sorted.
func others(edges []Edge, typ, self string, writers bool) []string {
	var out []string
	for _, e := range edges {
		if e.Type == typ && e.Controller != self && strings.HasPrefix(e.EdgeType, "Output") == writers && !slices.Contains(out, e.Controller) {
			out = append(out, e.Controller)
		}
	}
	slices.Sort(out)
	return out
}
