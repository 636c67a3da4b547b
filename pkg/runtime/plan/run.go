package plan

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// Retries in a plan's Runtime wait milliseconds, not the daemon's
// backoffs: what a retry leads to is planned, not when.
const (
	planBackoff    = time.Millisecond
	planBackoffMax = 10 * time.Millisecond
	// planTrace is the plan's trace: large enough for its causal chains.
	planTrace = 1 << 16
)

// run is one plan's run of the daemon.
type run struct {
	cfg    config
	daemon Daemon
	change Change
	sys    System
	st     state.State
	rt     *runtime.Runtime
	// phases are the trace's stretches of the change's resources, one
	// each, in the order apply wrote them.
	phases []phase
}

// make runs the daemon from initial, before and after the change.
func (r *run) make(ctx context.Context, initial []resource.Resource) (*Plan, error) {
	var err error
	if r.sys, err = r.daemon.Setup(initial); err != nil {
		return nil, fmt.Errorf("plan: Setup: %w", err)
	}
	r.st = newScratch(initial)
	opts := append(slices.Clone(r.daemon.Options), runtime.WithQueueBackoff(planBackoff, planBackoffMax),
		runtime.WithRestartBackoff(planBackoff, planBackoffMax), runtime.WithTrace(planTrace))
	if r.rt, err = runtime.New(r.st, r.cfg.logger, opts...); err != nil {
		return nil, err
	}
	if err := r.sys.Register(r.rt); err != nil {
		return nil, fmt.Errorf("plan: Register: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r.rt.Run(runCtx) }()
	defer func() {
		cancel()
		<-done
	}()
	return r.plan(ctx, initial)
}

// plan settles the daemon, applies the change, settles it again and
// tells the difference.
func (r *run) plan(ctx context.Context, initial []resource.Resource) (*Plan, error) {
	p := &Plan{sensitive: r.cfg.sensitive}
	if by := r.change.sensitive; by != nil {
		also := r.cfg.sensitive
		p.sensitive = func(t resource.Type) bool { return by(t) || also != nil && also(t) }
	}
	ring := r.rt.Observe().Trace()
	if why := r.settle(ctx, 0); why != "" {
		p.Why = "before the change: " + why
		p.Loop = lastCommits(ring, 0)
		return p, nil
	}
	baseline, err := r.state(ctx)
	if err != nil {
		return nil, err
	}
	p.Drift = diff(initial, baseline)
	mark, world := ring.Last(), len(r.actions())
	if p.Why, err = r.apply(ctx, mark); err != nil {
		return nil, err
	}
	final, err := r.state(ctx)
	if err != nil {
		return nil, err
	}
	p.Changes, p.Final = diff(baseline, final), final
	g, err := r.rt.GetDependencyGraph()
	if err != nil {
		return nil, err
	}
	rd := readersOf(g)
	rd.actors, rd.observers = slices.Sorted(slices.Values(r.sys.Actors)), slices.Sorted(slices.Values(r.sys.Observers))
	explain(p.Changes, ring, r.phases, rd, r.change, r.actions())
	explainDrift(p.Drift, ring, mark, rd, initial, r.actions()[:world])
	p.World = worldOf(r.actions(), world, r.phases)
	p.Converged = p.Why == ""
	if !p.Converged {
		p.Loop = lastCommits(ring, mark)
	}
	return p, nil
}

// worldOf returns the world actions taken after the first from (the
// change's), phase after phase (rule PL5): those of one phase in the
// order of their text, since controllers acting at once take theirs in
// either order.
func worldOf(actions []string, from int, phases []phase) []string {
	out := slices.Clone(actions[from:])
	for i, ph := range phases {
		end := len(actions)
		if i+1 < len(phases) {
			end = phases[i+1].world
		}
		slices.Sort(out[ph.world-from : end-from])
	}
	return out
}

func (r *run) actions() []string {
	if r.sys.Actions == nil {
		return nil
	}
	return r.sys.Actions()
}

// state reads the scratch state: every kind of the live state copied,
// and every kind the daemon's graph names.
func (r *run) state(ctx context.Context) ([]resource.Resource, error) {
	g, err := r.rt.GetDependencyGraph()
	if err != nil {
		return nil, err
	}
	return snapshot(ctx, r.st, kindsOf(g))
}

// apply makes the change as an outside writer, one resource at a time,
// the daemon settling after each (so that the trace's causes of each
// write lead to one proposed resource): each resource to set created or
// written over, each to remove torn down and destroyed once its
// finalizers are gone. It returns why the daemon did not converge ("" when
// it did).
func (r *run) apply(ctx context.Context, mark uint64) (string, error) {
	ring := r.rt.Observe().Trace()
	for _, want := range r.change.Set {
		r.phases = append(r.phases, phase{from: ring.Last(), proposed: resource.PointerOf(want.Metadata()), world: len(r.actions())})
		if err := set(ctx, r.st, want); err != nil {
			return "", fmt.Errorf("plan: set %s: %w", resource.String(want), err)
		}
		if why := r.settle(ctx, mark); why != "" {
			return why, nil
		}
	}
	for _, ptr := range r.change.Remove {
		r.phases = append(r.phases, phase{from: ring.Last(), proposed: resource.PointerOf(ptr), world: len(r.actions())})
		if _, err := r.st.Teardown(ctx, ptr); err != nil && !state.IsNotFoundError(err) {
			return "", fmt.Errorf("plan: remove %s: %w", resource.PointerString(ptr), err)
		}
		if why := r.settleRemoval(ctx, mark, ptr); why != "" {
			return why, nil
		}
	}
	return "", nil
}

// set makes want exist: created, or its spec, labels and annotations
// written over the stored resource (its owner, phase and finalizers
// kept).
func set(ctx context.Context, st state.State, want resource.Resource) error {
	cur, err := st.Get(ctx, want.Metadata())
	switch {
	case state.IsNotFoundError(err):
		return st.Create(ctx, want.DeepCopy())
	case err != nil:
		return err
	case cur.Metadata().Phase() == resource.PhaseTearingDown:
		return fmt.Errorf("it is tearing down")
	}
	res := want.DeepCopy()
	md := cur.Metadata().Copy()
	replace(md.Labels(), res.Metadata().Labels().Raw())
	replace(md.Annotations(), res.Metadata().Annotations().Raw())
	*res.Metadata() = md
	return st.Update(ctx, res, state.WithUpdateOwner(md.Owner()))
}

// replace makes l hold exactly want.
func replace(l interface {
	Raw() map[string]string
	Set(k, v string)
	Delete(k string)
}, want map[string]string) {
	for k := range l.Raw() {
		l.Delete(k)
	}
	for k, v := range want {
		l.Set(k, v)
	}
}

// newScratch returns a state that starts with the resources rs as they
// are (versions, owners, phases, finalizers kept).
func newScratch(rs []resource.Resource) state.State {
	return inmem.NewState(inmem.WithPersistence(restore(rs)))
}

// NewState returns an in-memory state that starts with the resources rs
// as they are — versions, owners, phases and finalizers kept, which
// writes through a state cannot set — and keeps nothing beyond memory: a
// state to plan against (a Plan's Final, a recording's state).
func NewState(rs []resource.Resource) state.State { return newScratch(rs) }

// restore is a persistence that restores resources and keeps nothing.
type restore []resource.Resource

func (p restore) Restore() inmem.Restored {
	out := inmem.Restored{Lineage: 0x91a, Run: 1}
	for _, r := range p {
		out.Resources = append(out.Resources, r.DeepCopy())
		if c := r.Metadata().Created(); c.After(out.CreatedFloor) {
			out.CreatedFloor = c
		}
	}
	return out
}

func (restore) Append(resource.Namespace, resource.Type, resource.ID, resource.Resource) (inmem.Pending, error) {
	return nil, nil
}

// lastCommits lists the last commits of the trace after mark: what a
// run that does not converge keeps doing.
func lastCommits(ring *trace.Ring, mark uint64) []string {
	evs, _ := ring.Since(mark, nil)
	var out []string
	for i := len(evs) - 1; i >= 0 && len(out) < 12; i-- {
		if e := evs[i]; e.Type == trace.Commit {
			out = append(out, fmt.Sprintf("%s %s %s", e.Controller, e.Op, e.Resource.String()))
		}
	}
	slices.Reverse(out)
	return out
}
