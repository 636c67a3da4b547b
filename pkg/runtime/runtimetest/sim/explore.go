package sim

import (
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// outcome is what one run did.
type outcome struct {
	seed       uint64
	failure    *Failure
	transcript Transcript
	steps      int
	virtual    time.Duration
	faults     int
	ops        int
	token      string
	final      *View
	plan       plan
	seedUsed   bool
}

// outcome collects a finished run's outcome; its plan replays it.
func (r *run) outcome() *outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := plan{seed: r.p.seed, keep: r.p.keep, sched: r.sched.decisions(), faults: r.faults.decisions(), writeFaults: maps.Clone(r.wrote), noFaults: r.p.noFaults}
	return &outcome{
		seed: r.p.seed, failure: r.failure, transcript: slices.Clone(r.transcript), steps: r.steps,
		virtual: time.Since(r.start), faults: r.nFaults, ops: len(r.ops),
		token: encodeToken(p), final: r.final, plan: p, seedUsed: r.seedUsed,
	}
}

// execute runs one plan in a bubble of its own.
func execute(t *testing.T, sc *Scenario, p plan) (o *outcome) {
	defer func() {
		if v := recover(); v != nil {
			// synctest.Test panics when goroutines of the bubble are left
			// blocked for ever; a run reports its leaks before that.
			if o == nil {
				o = &outcome{seed: p.seed, failure: &Failure{Check: "sim", Message: fmt.Sprint("the run panicked: ", v)}, plan: p}
			}
		}
	}()
	synctest.Test(t, func(*testing.T) {
		r := newRun(sc, p)
		r.execute()
		o = r.outcome()
	})
	return o
}

// Result is what a simulation found: [Test]'s covers every seed it ran,
// [Replay]'s the one run it replayed. It shows one run: the smallest
// failing run found (shrunk from the failing seed's run, which Found
// shows), else the last run.
type Result struct {
	// Scenario is the scenario's name.
	Scenario string
	// Seeds is the number of seeds run (1 for a replay); Runs counts
	// every run, reference and shrinking runs included.
	Seeds, Runs int
	// Wall is the wall time of the simulation, Virtual the virtual time
	// of the seeds' runs (of the run shown, in Found).
	Wall, Virtual time.Duration
	// Failure is the check the run shown failed; nil when every run
	// passed.
	Failure *Failure
	// Seed is the run's seed, Token replays it exactly ([Replay],
	// -sim.replay), Transcript is what it did, up to the failure.
	Seed       uint64
	Token      string
	Transcript Transcript
	// Steps is the number of steps the run took, Ops the workload's ops
	// it had, Faults the faults injected.
	Steps, Ops, Faults int
	// Found is the failing run as found (its seed's run), before
	// shrinking: nil when nothing failed or nothing was shrunk.
	Found *Result
	// ShrinkRuns is the number of runs shrinking took; Command is the
	// command that replays the run shown in the calling test.
	ShrinkRuns int
	Command    string
	// Nondeterministic is set when the failure did not reproduce (see
	// [Nondeterminism]): the run shown is then the seed's run as found,
	// not shrunk.
	Nondeterministic *Nondeterminism
}

// resultOf shows one run's outcome.
func resultOf(name string, o *outcome) Result {
	return Result{
		Scenario: name, Seeds: 1, Runs: 1, Virtual: o.virtual, Failure: o.failure,
		Seed: o.seed, Token: o.token, Transcript: o.transcript,
		Steps: o.steps, Ops: o.ops, Faults: o.faults,
	}
}

// SeedsPerSecond is the simulation's throughput.
func (r Result) SeedsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Seeds) / r.Wall.Seconds()
}

// String is the report a failing test prints: where the failure was
// found, what failed, the smallest run that fails the same way, its
// transcript's end and the command that replays it. A passing Result says
// how many seeds passed.
func (r Result) String() string {
	if r.Failure == nil {
		return fmt.Sprintf("sim %s: %d seeds (%d runs) passed in %v wall, %v virtual", r.Scenario, r.Seeds, r.Runs, r.Wall.Round(time.Millisecond), r.Virtual.Round(time.Millisecond))
	}
	o := r.Found
	if o == nil {
		o = &r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed at step %d (virtual %v): %s\n", o.Seed, o.Failure.Step, o.Virtual.Round(time.Millisecond), o.Failure)
	fmt.Fprintf(&b, "found after %d seeds, %v wall, %v virtual\n", r.Seeds, r.Wall.Round(time.Millisecond), r.Virtual.Round(time.Millisecond))
	if n := r.Nondeterministic; n != nil {
		fmt.Fprintf(&b, "%s\n", n)
		fmt.Fprintf(&b, "transcript of the run as found (last %d of %d entries):\n%s", min(len(o.Transcript), transcriptShown), len(o.Transcript), o.Transcript.Tail(transcriptShown))
		fmt.Fprintf(&b, "the seed as found: -sim.seed=%d -sim.seeds=1", o.Seed)
		return b.String()
	}
	fmt.Fprintf(&b, "shrunk in %d runs to %d workload ops (of %d), %d faults (of %d), %d steps (of %d): %s\n",
		r.ShrinkRuns, r.Ops, o.Ops, r.Faults, o.Faults, r.Steps, o.Steps, r.Failure)
	if r.Failure.Detail != "" {
		fmt.Fprintf(&b, "detail:\n%s\n", r.Failure.Detail)
	}
	fmt.Fprintf(&b, "transcript of the shrunk run (last %d of %d entries):\n%s", min(len(r.Transcript), transcriptShown), len(r.Transcript), r.Transcript.Tail(transcriptShown))
	fmt.Fprintf(&b, "replay: %s\n", r.Command)
	fmt.Fprintf(&b, "the seed as found: -sim.seed=%d -sim.seeds=1 (or -sim.replay=%s%d)", o.Seed, seedPrefix, o.Seed)
	return b.String()
}

// transcriptShown bounds the entries a report prints.
const transcriptShown = 120

// explorer explores one scenario.
type explorer struct {
	t    *testing.T
	sc   *Scenario
	runs int
	// refs are the reference runs by workload (seed and kept steps).
	refs map[string]*outcome
}

// refKey names the workload of p: the seed and kept steps, or only the
// kept steps for a Script whose world did not read the seed.
func (x *explorer) refKey(p plan, seedFree bool) string {
	keep := "all"
	if p.keep != nil {
		keep = fmt.Sprint(p.keep)
	}
	if seedFree {
		return "script " + keep
	}
	return fmt.Sprint(p.seed, " ", keep)
}

// reference returns the reference run of p's workload: every change
// handled as soon as it is made (a tape of zeros), no fault.
func (x *explorer) reference(p plan) *outcome {
	_, script := x.sc.Workload.(script)
	if script || x.sc.Workload == nil {
		if o, ok := x.refs[x.refKey(p, true)]; ok {
			return o
		}
	}
	if o, ok := x.refs[x.refKey(p, false)]; ok {
		return o
	}
	x.runs++
	o := execute(x.t, x.sc, plan{seed: p.seed, keep: p.keep, noFaults: true})
	x.refs[x.refKey(p, false)] = o
	if (script || x.sc.Workload == nil) && !o.seedUsed {
		x.refs[x.refKey(p, true)] = o
	}
	return o
}

// evaluate runs p, and compares its final state with the reference run's.
func (x *explorer) evaluate(p plan) *outcome {
	var ref *outcome
	if !x.sc.NoReference {
		ref = x.reference(p)
		if ref.failure != nil {
			return ref
		}
	}
	x.runs++
	o := execute(x.t, x.sc, p)
	if o.failure == nil && ref != nil && o.final != nil && ref.final != nil {
		if err := x.equivalent(*o.final, *ref.final); err != nil {
			o.failure = &Failure{Check: "reference", Step: o.steps, Message: "the final state differs from the reference run's (same workload, every change handled at once, no fault): " + err.Error()}
			o.transcript = append(o.transcript, Entry{Step: o.steps, At: o.virtual, What: "check", Text: o.failure.String()})
		}
	}
	return o
}

func (x *explorer) equivalent(run, ref View) (err error) {
	if x.sc.Equivalent != nil {
		return guard("Equivalent", func() error { return x.sc.Equivalent(run, ref) })
	}
	return guard("Canonical", func() error { return sameResources(run, ref, x.sc.Canonical, x.sc.OrderedFinalizers) })
}

// Test runs the scenario's seeds within the budget (see the package doc)
// and fails t with the report of the first failure found (shrunk to the
// smallest run that fails the same way). A scenario with WantFailure (a
// known bug, e.g. a mutant) fails t when no run fails instead. With
// -sim.replay (or RESGRAPH_SIM_REPLAY) it runs that token only, as
// [Replay] does. It returns what it found.
func Test(t *testing.T, sc Scenario) Result {
	t.Helper()
	b := budgetOf(&sc)
	var res Result
	sc, err := loadRecording(sc, b.recording)
	if err != nil {
		t.Fatal(err)
	}
	if b.replay != "" {
		var err error
		if res, err = Replay(t, sc, b.replay); err != nil {
			t.Fatalf("sim %s: %v", sc.Name, err)
		}
		t.Logf("sim %s: replay %s: %d steps, virtual %v\n%s", sc.Name, b.replay, res.Steps, res.Virtual, res.Transcript)
	} else {
		res = explore(t, &sc, b)
	}
	switch {
	case res.Failure != nil && !sc.WantFailure:
		t.Fatalf("sim %s failed:\n%s", sc.Name, res)
	case res.Failure == nil && sc.WantFailure:
		t.Fatalf("sim %s: no run failed in %d seeds, and the scenario wants a failure", sc.Name, res.Seeds)
	}
	return res
}

// explore runs the budget's seeds, and shrinks the first failure found.
func explore(t *testing.T, sc *Scenario, b budget) Result {
	x := &explorer{t: t, sc: sc, refs: map[string]*outcome{}}
	start := time.Now()
	var res Result
	seeds := 0
	var virtual time.Duration
	for i := 0; i < b.seeds; i++ {
		if i > 0 && b.time > 0 && time.Since(start) > b.time {
			break
		}
		o := x.evaluate(plan{seed: b.first + uint64(i), explore: true})
		seeds++
		virtual += o.virtual
		res = resultOf(sc.Name, o)
		if o.failure != nil {
			res = x.found(t, o, b)
			break
		}
	}
	res.Seeds, res.Runs, res.Wall, res.Virtual = seeds, x.runs, time.Since(start), virtual
	switch {
	case res.Failure != nil && sc.WantFailure:
		// Test does not fail t with it: the report is logged here.
		t.Logf("sim %s: FAILED after %d seeds (%d runs) in %v (%.1f seeds/s):\n%s", sc.Name, res.Seeds, res.Runs, res.Wall.Round(time.Millisecond), res.SeedsPerSecond(), res)
	case res.Failure != nil:
		// Test fails t with the report: printed once.
	default:
		t.Logf("sim %s: %d seeds (seeds %d-%d, %d runs) passed in %v wall, %v virtual: %.1f seeds/s", sc.Name, res.Seeds, b.first, b.first+uint64(max(res.Seeds, 1)-1), res.Runs, res.Wall.Round(time.Millisecond), res.Virtual.Round(time.Millisecond), res.SeedsPerSecond())
	}
	return res
}

// found checks that the failing run o reproduces and shrinks it: a
// failure that does not reproduce is reported as nondeterministic (and
// not shrunk: the shrinker would chase a flaky failure), as is one whose
// shrunk run's token replays clean.
func (x *explorer) found(t *testing.T, o *outcome, b budget) Result {
	res := resultOf(x.sc.Name, o)
	before := x.runs
	if res.Nondeterministic = x.recheck(o); res.Nondeterministic != nil {
		res.ShrinkRuns, res.Command = x.runs-before, replayCommand(t, res.Token)
		return res
	}
	found := res
	s := x.shrink(o, b.shrinkTime)
	res = resultOf(x.sc.Name, s)
	res.Nondeterministic = x.replayClean(s)
	res.Found, res.ShrinkRuns, res.Command = &found, x.runs-before, replayCommand(t, res.Token)
	return res
}

// Replay runs the one run token names, with the reference comparison,
// and returns its Result without failing t (a test checks it: a replayed
// failure fails again). A token is a Result's Token (the exact run:
// schedule, faults and workload), or "seed=N" for the run of seed N as
// Test runs it. A token that is neither is an error.
func Replay(t *testing.T, sc Scenario, token string) (Result, error) {
	t.Helper()
	p, err := decodeToken(token)
	if err != nil {
		return Result{Scenario: sc.Name}, err
	}
	if sc, err = withRecording(sc); err != nil {
		return Result{Scenario: sc.Name}, err
	}
	x := &explorer{t: t, sc: &sc, refs: map[string]*outcome{}}
	start := time.Now()
	o := x.evaluate(p)
	res := resultOf(sc.Name, o)
	res.Runs, res.Wall = x.runs, time.Since(start)
	if o.failure != nil {
		res.Command = replayCommand(t, o.token)
	}
	return res, nil
}

// replayCommand is the command that replays token in the calling test:
// with the -sim.recording file the test replays, if any (made absolute:
// go test runs a test in its package's directory).
func replayCommand(t *testing.T, token string) string {
	cmd := fmt.Sprintf("go test %s -run '%s' -count=1 -v -sim.replay=%s", callerPackage(), runPattern(t.Name()), token)
	if path := recordingSetting(); path != "" {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		cmd += " -sim.recording=" + path
	}
	return cmd
}

// runPattern anchors each element of a test's name for -run.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexpQuote(p) + "$"
	}
	return strings.Join(parts, "/")
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// callerPackage returns the import path of the first caller outside this
// package (the test calling it).
func callerPackage() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	self := ""
	for {
		f, more := frames.Next()
		pkg := funcPackage(f.Function)
		if self == "" {
			self = pkg
		} else if pkg != self && pkg != "" && !strings.HasPrefix(pkg, "testing") {
			return strings.TrimSuffix(pkg, "_test")
		}
		if !more {
			return "."
		}
	}
}

// funcPackage returns the package path of a function name as
// runtime.Frame reports it ("path/to/pkg.Func.func1" → "path/to/pkg").
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return fn[:slash+1+dot]
}
