package plan

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/graphkinds"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

// Daemon is what a plan runs: the daemon's Runtime options, and its
// controllers over fakes of its world.
type Daemon struct {
	// Options are the daemon's Runtime options (cached kinds, ...).
	Options []runtime.Option
	// Setup builds fakes of the daemon's world (a kernel, a network) in
	// the condition the state initial describes (read-only snapshots,
	// sorted; nil when Make only asks for the daemon's graph) and
	// returns the daemon's System over them. The fakes never touch the
	// real world.
	Setup func(initial []resource.Resource) (System, error)
}

// System is a daemon's controllers over its world's fakes.
type System struct {
	// Register registers the daemon's controllers. Required.
	Register func(e controller.Engine) error
	// Actions returns what the fakes were asked to do since Setup, in
	// order ("create link eth2, MTU 1500"): the world actions the plan
	// reports. Nil: the world tells nothing.
	Actions func() []string
	// Actors name the controllers that take the world's actions, and
	// Observers those that write what they read of the world (a
	// controller woken by the world, not by the state). A write of an
	// observer that no change of its phase explains follows the phase's
	// world actions, taken by the actor the change reached first (rule
	// PL5). Nil: no write is explained by the world.
	Actors, Observers []string
	// Quiet reports whether the world has told its observers all it has
	// to tell: every notification it sent them (on a channel of its own,
	// which the Runtime's idleness does not cover) was taken, and the
	// observer's pass that read the world after it has ended, its writes
	// made. The daemon is at its fixed point only when the world is
	// quiet too (rule PL3), so that no observer's write is left out of
	// the plan or taken for a later resource's. Called often, from the
	// plan's goroutine: it must return promptly. Nil: the world is always
	// quiet (its observers are woken by the state alone).
	Quiet func() bool
}

// Plan is what a proposed change would do: see the package doc.
type Plan struct {
	// Changes are the resources the change would create, update or
	// destroy (the proposed ones included), sorted by kind and ID.
	Changes []ResourceChange
	// Drift are the changes the daemon would make to the live state
	// before the proposed one (nothing, for a daemon at its fixed point):
	// they are not in Changes.
	Drift []ResourceChange
	// World are the world actions the daemon would take: those of each
	// proposed resource in the order the change was applied, sorted
	// within each (rule PL5).
	World []string
	// Final is the state at the daemon's fixed point after the change,
	// sorted by kind and ID (read-only): what the live state would be.
	Final []resource.Resource
	// Converged is set when the daemon reached its fixed point; Why says
	// why not otherwise (a hot loop and its cycle, work left when the
	// time ran out, more commits than the bound), and Loop lists the last
	// commits of a run that did not converge.
	Converged bool
	Why       string
	Loop      []string
	// sensitive reports a type whose specs are not printed.
	sensitive func(resource.Type) bool
}

// Op is what a plan does to a resource.
type Op uint8

// What a plan does to a resource.
const (
	Create Op = iota + 1
	Update
	Destroy
)

func (o Op) String() string {
	switch o {
	case Create:
		return "create"
	case Update:
		return "update"
	case Destroy:
		return "destroy"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// ResourceChange is one resource a plan changes.
type ResourceChange struct {
	Op      Op
	Pointer resource.PointerKey
	// Before and After are the resource before and after (nil for a
	// create, a destroy); read-only.
	Before, After resource.Resource
	// Fields are the fields that change (for an update): spec fields by
	// their JSON path, labels, annotations, finalizers, phase, owner.
	Fields []FieldChange
	// Proposed is set for a resource the change itself names.
	Proposed bool
	// Writers are the controllers that wrote it, in order of their first
	// write.
	Writers []string
	// Chain is the causal chain from the proposed change to the
	// resource's first write (rule PL5): the proposed resource
	// ("LinkSpecs(config/eth1) (the change)"), then each link a
	// controller's first write of a resource ("LinkApplyController
	// teardown LinkStatuses(network/eth1)").
	Chain []string
}

// FieldChange is one field that changes.
type FieldChange struct {
	Path          string
	Before, After string
}

// RefusedError is a change a plan refuses: what it names is not the
// daemon's users' to write.
type RefusedError struct {
	// Reasons say what is wrong, one per resource.
	Reasons []string
}

func (e *RefusedError) Error() string {
	return "plan: the change is refused: " + joinReasons(e.Reasons)
}

// InvalidError marks the refusal as bad input (state.IsInvalidError).
func (*RefusedError) InvalidError() {}

// Option configures [Make].
type Option func(*config)

type config struct {
	timeout   time.Duration
	commits   int
	sensitive func(resource.Type) bool
	logger    *zap.Logger
}

// WithTimeout bounds the time the daemon has to reach its fixed point,
// before and after the change (default 30 s).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithCommitBound bounds the commits the daemon may make after the change
// (default 10,000): past it, the plan does not converge.
func WithCommitBound(n int) Option { return func(c *config) { c.commits = n } }

// WithSensitive says which types' specs the plan's text must not print
// (a codec registry's Definitions().Sensitive, for one).
func WithSensitive(fn func(resource.Type) bool) Option { return func(c *config) { c.sensitive = fn } }

// WithLogger is the logger of the plan's Runtime (none by default).
func WithLogger(l *zap.Logger) Option { return func(c *config) { c.logger = l } }

// Make plans change against the state live (rule PL1: nothing is written
// to it): it copies the daemon's kinds of live into a state of its own,
// runs the daemon's controllers over it and over its world's fakes to
// their fixed point, applies change as an outside writer, runs them to
// their fixed point again, and returns what changed. A change that names
// a kind the daemon does not know, or writes or removes a controller's
// output, or removes a resource that does not exist (and that it does not
// set), is refused with a [*RefusedError] before anything runs (rule
// PL2).
func Make(ctx context.Context, live state.State, d Daemon, change Change, opts ...Option) (*Plan, error) {
	c := config{timeout: 30 * time.Second, commits: 10_000, sensitive: func(resource.Type) bool { return false }, logger: zap.NewNop()}
	opt.Apply(&c, opts)
	if d.Setup == nil {
		return nil, state.NewInvalidError(nil, "plan: the Daemon has no Setup")
	}
	g, err := graphOf(d)
	if err != nil {
		return nil, err
	}
	if err := check(change, g); err != nil {
		return nil, err
	}
	initial, err := snapshot(ctx, live, graphkinds.Kinds(g))
	if err != nil {
		return nil, err
	}
	if err := checkRemovals(change, initial); err != nil {
		return nil, err
	}
	r := &run{cfg: c, daemon: d, change: change}
	return r.make(ctx, initial)
}

// graphOf returns the daemon's dependency graph: its controllers
// registered with a Runtime that never runs.
func graphOf(d Daemon) (*controller.DependencyGraph, error) {
	sys, err := d.Setup(nil)
	if err != nil {
		return nil, fmt.Errorf("plan: Setup: %w", err)
	}
	if sys.Register == nil {
		return nil, state.NewInvalidError(nil, "plan: the System has no Register")
	}
	rt, err := runtime.New(newScratch(nil), nil, d.Options...)
	if err != nil {
		return nil, err
	}
	if err := sys.Register(rt); err != nil {
		return nil, fmt.Errorf("plan: Register: %w", err)
	}
	return rt.GetDependencyGraph()
}

// check refuses a change that names a kind the daemon does not know, or
// a type one of its controllers writes.
func check(c Change, g *controller.DependencyGraph) error {
	kinds, writers := graphkinds.Kinds(g), graphkinds.Writers(g)
	var reasons []string
	ptrs := slices.Clone(c.Remove)
	for _, r := range c.Set {
		ptrs = append(ptrs, r.Metadata())
	}
	for _, p := range ptrs {
		what := resource.PointerString(p)
		switch {
		case !slices.Contains(kinds, resource.KindOf(p)):
			reasons = append(reasons, fmt.Sprintf("%s: the daemon has no kind %s (no controller reads or writes it)", what, resource.KindString(p)))
		case len(writers[p.Type()]) > 0:
			reasons = append(reasons, fmt.Sprintf("%s: %s is written by %s, not by the daemon's users", what, p.Type(), joinReasons(writers[p.Type()])))
		}
	}
	if len(reasons) > 0 {
		return &RefusedError{Reasons: reasons}
	}
	return nil
}

// checkRemovals refuses a change that removes a resource the live state
// does not hold and the change does not set (rule PL2).
func checkRemovals(c Change, initial []resource.Resource) error {
	have := make(map[string]bool, len(initial)+len(c.Set))
	for _, r := range initial {
		have[resource.PointerString(r.Metadata())] = true
	}
	for _, r := range c.Set {
		have[resource.PointerString(r.Metadata())] = true
	}
	var reasons []string
	for _, p := range c.Remove {
		if what := resource.PointerString(p); !have[what] {
			reasons = append(reasons, fmt.Sprintf("%s: there is no such resource to remove", what))
		}
	}
	if len(reasons) > 0 {
		return &RefusedError{Reasons: reasons}
	}
	return nil
}

// snapshot reads every kind of live: private copies, sorted.
func snapshot(ctx context.Context, live state.State, kinds []resource.KindKey) ([]resource.Resource, error) {
	var out []resource.Resource
	for _, k := range kinds {
		l, err := live.List(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("plan: read the live state: %s: %w", resource.KindString(k), err)
		}
		out = append(out, l.Items...)
	}
	return out, nil
}

func joinReasons(rs []string) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += "; "
		}
		out += r
	}
	return out
}
