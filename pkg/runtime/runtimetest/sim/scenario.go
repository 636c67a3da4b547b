package sim

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/runtime"
)

// Scenario is what a simulation runs: a daemon's controllers on the real
// Runtime, an initial state, a workload of outside writes, the faults to
// inject and the checks to make. Every field but Setup is optional.
type Scenario struct {
	// Name names the scenario in reports.
	Name string
	// Setup builds one run's world — the fakes of what the daemon talks to
	// besides the state (a kernel, a network) — and returns the run's
	// System. It is called once per run, inside the run's bubble, before
	// the first Runtime starts; the world outlives Runtime restarts.
	Setup func(w *World) (System, error)
	// Options are passed to every Runtime the runs start (cached kinds,
	// backoffs, ...).
	Options []runtime.Option
	// Initial are the resources the state holds when the first Runtime
	// starts (written as by an outside writer: no owner).
	Initial []resource.Resource
	// Workload is the outside writers' part: a Script, or a generator of
	// random writes over templates (Generate). Nil: no outside writes.
	Workload Workload
	// Faults are the faults injected while the workload runs.
	Faults Faults
	// Invariants are checked after every step, on the committed state.
	Invariants []Invariant
	// Final checks the state once the run converged (after the workload,
	// every fault, and the Runtime's work ended).
	Final func(v View) error
	// Equivalent compares the final state of a run with the final state
	// of the reference run of the same workload (every change handled as
	// soon as it is made, no fault): nil when they are equivalent, or an
	// error that says how they differ. Nil Equivalent: the same resources
	// (by pointer) with the same spec, owner, phase, finalizers (as a set:
	// their order is that of the adds, which depends on the schedule),
	// labels and annotations (as maps), versions and times aside, after
	// Canonical.
	Equivalent func(run, reference View) error
	// OrderedFinalizers makes the default equivalence compare finalizers
	// in order (for a daemon whose finalizer order carries meaning).
	OrderedFinalizers bool
	// Canonical maps a resource to the form the default equivalence
	// compares (e.g. with a field a fake world assigns in the order of
	// calls zeroed); nil: the resource itself. It must not change its
	// argument: return a changed DeepCopy.
	Canonical func(r resource.Resource) resource.Resource
	// NoReference turns the comparison with the reference run off (the
	// final state legitimately depends on the order of changes).
	NoReference bool
	// Bounds bound each run; zero fields take their defaults.
	Bounds Bounds
	// Recording, when set, is what the scenario replays: the starting
	// state and the workload (outside changes and world actions at their
	// recorded times) of a daemon's recording (package recording), in
	// place of Initial and Workload, which stay unset. The -sim.recording
	// flag sets it from a file, decoded with Codec.
	Recording *recording.Recording
	// Codec decodes the -sim.recording file: the daemon's resource
	// types.
	Codec *codec.Registry
	// MatchRecording makes the reference run (the recorded workload,
	// every change handled at once, no fault) check that it reproduces
	// the Recording: each resource's commits the same, in order (its
	// versions; the owner an outside writer wrote as; the controller
	// that wrote a controller's commit, when the recording names it),
	// and the same final state (after Canonical). In that run each
	// controller's commit is a step of its own, taken in the recording's
	// order: a pass stops before each of its writes (a Modify after its
	// function, which reads where the pass read), and the commit the
	// recording has next goes first, so that another controller's pass
	// can read the state half-way through a pass's writes, as it did
	// when recorded; a controller's pass is let go once the run made as
	// many commits as the recording had when that pass read the state
	// (the newest of its reads' revisions before the commit at which
	// every kind it read was as its read saw it, a read of a cache behind
	// the others included, from the recording's pass log, rule RC13 of
	// package recording; of a QController item's run, when there is none,
	// the newest at which the resources of its item's ID were as read;
	// when there is none, where its first read did,
	// recording.Change.Read, rule RC9; of an incremental pass whose batch
	// of changes came before that, where the batch came,
	// recording.Pass.Batch), before a recorded outside write
	// that came after it, or, when the recording does not say, when its
	// commit comes next; a Controller is offered a wake-up only between
	// its passes (none while one of its writes or world reads waits:
	// its next pass would read where this one ends), and while a recorded
	// commit was made by a pass that read the state the run is at, the
	// Runtime's deliveries go before the next commit (one may wake that
	// pass); a write is let go ahead of its turn only as part of the pass
	// (of a QController, the item) whose commit comes next; each
	// idle worker of a QController takes the item the schedule picks
	// among those its queue has due, not the queue's first: the item the
	// recording says made a commit (recording.Change.Item) is picked
	// once the run is at the state that item's run first read, and held
	// in the queue before. A recorded outside write or world action is
	// taken at its place among the commits, whatever the time (it waits
	// for the commits the recording has before it, and for the world
	// reads it has before it: their reader's pass ends and it reads
	// again, rather than reading once for two wake-ups). A world fake
	// that returns the recorded world reads (World.Observed) is read where
	// the recording read it; while the commit the recording has next (or
	// a world read it has before its next outside write or world action)
	// is a reader's that waits, made after a read it was not handed yet,
	// the world's relays are signalled again (World.Relay), once for each
	// such read: the recorded world signalled it more often than the
	// replay's fakes did (their signals coalesced). A
	// recording whose recorder fell behind (Recording.Coalesced) cannot
	// be matched. Nor can, commit for commit, a recording in which a pass
	// read a world its scenario does not feed from the recording
	// (World.Observed), or a pass whose reads saw no one state (a kind it
	// read changed between the revisions its reads saw) or, in a
	// recording without a pass log (version 3), spread over other
	// passes' commits. The
	// failure names the first commit where the replay departed from the
	// recording's order.
	MatchRecording bool
	// Seeds and Time are the budget of Test when no flag or environment
	// variable sets one (see the package doc); zero: 100 seeds, no time
	// limit.
	Seeds int
	Time  time.Duration
	// WantFailure marks a scenario with a known bug (a mutant, a
	// reproduction): Test fails when no run fails, and returns the
	// failure found.
	WantFailure bool
}

// Bounds bound a run. A run that does not converge within them fails.
type Bounds struct {
	// Converge is the virtual time within which the Runtime must be quiet
	// once the workload and the faults ended (default 5 min).
	Converge time.Duration
	// Steps is the most steps a run may take, all phases together
	// (default 20,000): a run that keeps the Runtime busy for longer does
	// not converge.
	Steps int
	// Quiet is how long the Runtime must stay quiet, with no timer of its
	// own pending, to have converged: timers of user code (a Controller's
	// own retry) that fire within it wake it up (default 2 min, past the
	// Runtime's longest default backoff).
	Quiet time.Duration
	// StepTime is the virtual time each step takes (default 1 ms).
	StepTime time.Duration
}

func (b Bounds) withDefaults() Bounds {
	if b.Converge <= 0 {
		b.Converge = 5 * time.Minute
	}
	if b.Steps <= 0 {
		b.Steps = 20000
	}
	if b.Quiet <= 0 {
		b.Quiet = 2 * time.Minute
	}
	if b.StepTime <= 0 {
		b.StepTime = time.Millisecond
	}
	return b
}

// System is one run's daemon, as Setup builds it around its world.
type System struct {
	// Register registers the daemon's controllers with a fresh Runtime: at
	// the start of the run and after every restart of the Runtime (a
	// daemon restarting builds its controllers anew). Required.
	Register func(e controller.Engine) error
	// Actions are what may happen in the world (a cable unplugged, a
	// device gone) that a generated workload picks among its writes, and
	// that a Script names.
	Actions []Action
	// Invariants are checked after every step, with the scenario's; they
	// may read the world.
	Invariants []Invariant
	// Final checks the converged state, after the scenario's Final.
	Final func(v View) error
}

// Action is something that happens in the world, outside the daemon: Do runs as one step of the
// workload, from the simulator's goroutine (inside the run's bubble). An
// error is in the transcript, not a failure.
type Action struct {
	Name string
	Do   func(ctx context.Context) error
	// Named keeps Generate from picking the action: only a Script or a
	// Recording names it (one whose outcome depends on when it happens,
	// which a generated workload's reference comparison would flag — a
	// carrier lost on a link that may not exist yet).
	Named bool
}

// Invariant is a property of the committed state that must hold after
// every step.
type Invariant struct {
	Name  string
	Check func(v View) error
}

// Template is a kind of resource an outside writer writes: a generated
// workload sets resources of the template's IDs to what New returns (a
// create, or an update of the spec, labels and annotations), and removes
// them (a teardown, then the destroy once the finalizers are gone).
type Template struct {
	// IDs are the IDs the workload picks from.
	IDs []resource.ID
	// New returns resource id as the outside writer wants it, its spec
	// drawn from rng (the same rng state gives the same resource).
	New func(id resource.ID, rng *rand.Rand) resource.Resource
	// Weight is the template's share of the generated writes (0: 1).
	Weight int
	// NoRemove keeps the generator from removing resources of the
	// template.
	NoRemove bool
}

// Workload is a sequence of outside writes and actions: [Script] or
// [Generate].
type Workload interface {
	ops(seed uint64, actions []Action) []op
}

// Generate is a workload of n random ops: each sets (70 %) or removes
// (30 %) a resource of a template (picked by weight; an ID of its IDs), or
// runs one of the System's Actions that are not Named (one op in ten,
// when it has any). The ops are drawn from the run's seed.
func Generate(n int, templates ...Template) Workload { return generated{n: n, templates: templates} }

// Script is a fixed workload: its ops in order, the same for every seed
// (only the schedule and the faults differ).
func Script(ops ...Op) Workload { return script(ops) }

// Op is one operation of a workload, what an outside writer does: [Set],
// [Remove] or [Do]. A run takes each op as one of its steps.
type Op struct{ op op }

// Set makes r exist as given (created, or its spec, labels and
// annotations updated). A resource the workload removed is written again
// only once it is destroyed: the workload waits for it.
func Set(r resource.Resource) Op { return Op{op{verb: verbSet, fixed: r}} }

// Remove tears the resource down and destroys it once its finalizers are
// gone (as state.TeardownAndDestroy does; the workload's later ops on it
// wait for the destroy); nothing when it is absent.
func Remove(ptr resource.Pointer) Op {
	return Op{op{verb: verbRemove, ptr: resource.NewPointer(ptr.Namespace(), ptr.Type(), ptr.ID())}}
}

// Do runs the System's action named name.
func Do(name string) Op { return Op{op{verb: verbDo, action: name}} }
