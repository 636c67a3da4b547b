package sim

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Outcome is the result of one run.
type Outcome struct {
	// Seed is the run's seed.
	Seed uint64
	// Failure is the check that failed; nil when the run passed.
	Failure *Failed
	// Trace is the run's trace, up to the failure.
	Trace Transcript
	// Steps is the number of steps taken, Virtual the virtual time the run
	// took, Faults the faults injected, Ops the workload steps it had.
	Steps   int
	Virtual time.Duration
	Faults  int
	Ops     int
	// Token replays the run exactly (Replay, -sim.replay).
	Token string

	final    *View
	plan     plan
	seedUsed bool
}

// outcome collects a finished run's outcome; its plan replays it.
func (r *run) outcome() *Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := plan{seed: r.p.seed, keep: r.p.keep, sched: r.sched.decisions(), faults: r.faults.decisions(), writeFaults: maps.Clone(r.wrote), noFaults: r.p.noFaults}
	return &Outcome{
		Seed: r.p.seed, Failure: r.failure, Trace: slices.Clone(r.trace), Steps: r.steps,
		Virtual: time.Since(r.start), Faults: r.nFaults, Ops: len(r.ops),
		Token: encodeToken(p), final: r.final, plan: p, seedUsed: r.seedUsed,
	}
}

// execute runs one plan in a bubble of its own.
func execute(t *testing.T, sc *Scenario, p plan) (o *Outcome) {
	defer func() {
		if v := recover(); v != nil {
			// synctest.Test panics when goroutines of the bubble are left
			// blocked for ever; a run reports its leaks before that.
			if o == nil {
				o = &Outcome{Seed: p.seed, Failure: &Failed{Check: "sim", Message: fmt.Sprint("the run panicked: ", v)}, plan: p}
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

// Result is what Explore found.
type Result struct {
	// Scenario is the scenario's name.
	Scenario string
	// Seeds is the number of seeds explored; Runs counts every run,
	// reference and shrinking runs included.
	Seeds, Runs int
	// Wall is the wall time of the exploration, Virtual the virtual time
	// of the seeds' runs.
	Wall, Virtual time.Duration
	// Failure is the first failure found; nil when none.
	Failure *Report
}

// SeedsPerSecond is the exploration's throughput.
func (r Result) SeedsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Seeds) / r.Wall.Seconds()
}

// Report is a failure found by a simulation: where, how, and the
// smallest run that fails the same way.
type Report struct {
	// Original is the failing run as found (its seed's run).
	Original *Outcome
	// Shrunk is the smallest run found that fails the same way (the same
	// check): fewest workload steps, then fewest faults, then fewest
	// steps. Its Token replays it.
	Shrunk *Outcome
	// ShrinkRuns is the number of runs shrinking took.
	ShrinkRuns int
	// Seeds is how many seeds ran until it was found (it included), Wall
	// and Virtual the wall and virtual time it took to find it.
	Seeds         int
	Wall, Virtual time.Duration
	// Command replays the shrunk run.
	Command string
}

// String is the report a failing test prints.
func (rp *Report) String() string {
	o, s := rp.Original, rp.Shrunk
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed at step %d (virtual %v): %s\n", o.Seed, o.Failure.Step, o.Virtual.Round(time.Millisecond), o.Failure)
	fmt.Fprintf(&b, "found after %d seeds, %v wall, %v virtual\n", rp.Seeds, rp.Wall.Round(time.Millisecond), rp.Virtual.Round(time.Millisecond))
	fmt.Fprintf(&b, "shrunk in %d runs to %d workload steps (of %d), %d faults (of %d), %d steps (of %d): %s\n",
		rp.ShrinkRuns, s.Ops, o.Ops, s.Faults, o.Faults, s.Steps, o.Steps, s.Failure)
	if s.Failure.Detail != "" {
		fmt.Fprintf(&b, "detail:\n%s\n", s.Failure.Detail)
	}
	fmt.Fprintf(&b, "trace of the shrunk run (last %d of %d events):\n%s", min(len(s.Trace), traceShown), len(s.Trace), s.Trace.Tail(traceShown))
	fmt.Fprintf(&b, "replay: %s\n", rp.Command)
	fmt.Fprintf(&b, "the seed as found: -sim.seed=%d -sim.seeds=1", o.Seed)
	return b.String()
}

// traceShown bounds the events a report prints.
const traceShown = 120

// explorer explores one scenario.
type explorer struct {
	t    *testing.T
	sc   *Scenario
	runs int
	// refs are the reference runs by workload (seed and kept steps).
	refs map[string]*Outcome
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
func (x *explorer) reference(p plan) *Outcome {
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
func (x *explorer) evaluate(p plan) *Outcome {
	var ref *Outcome
	if !x.sc.NoReference {
		ref = x.reference(p)
		if ref.Failure != nil {
			return ref
		}
	}
	x.runs++
	o := execute(x.t, x.sc, p)
	if o.Failure == nil && ref != nil && o.final != nil && ref.final != nil {
		if err := x.equivalent(*o.final, *ref.final); err != nil {
			o.Failure = &Failed{Check: "reference", Step: o.Steps, Message: "the final state differs from the reference run's (same workload, every change handled at once, no fault): " + err.Error()}
			o.Trace = append(o.Trace, Entry{Step: o.Steps, At: o.Virtual, What: "check", Text: o.Failure.String()})
		}
	}
	return o
}

func (x *explorer) equivalent(run, ref View) (err error) {
	if x.sc.Equivalent != nil {
		return guard("Equivalent", func() error { return x.sc.Equivalent(run, ref) })
	}
	return guard("Canonical", func() error { return sameResources(run, ref, x.sc.Canonical) })
}

// Explore runs the scenario's seeds within the budget (see the package
// doc) and returns what it found, without failing t: a failure found is
// shrunk, and its report logged. With -sim.replay (or RESGRAPH_SIM_REPLAY)
// it runs that replay only.
func Explore(t *testing.T, sc Scenario) Result {
	t.Helper()
	b := budgetOf(&sc)
	x := &explorer{t: t, sc: &sc, refs: map[string]*Outcome{}}
	res := Result{Scenario: sc.Name}
	start := time.Now()
	if b.replay != "" {
		p, err := decodeToken(b.replay)
		if err != nil {
			t.Fatalf("sim: %v", err)
		}
		o := x.evaluate(p)
		res.Seeds, res.Runs, res.Wall, res.Virtual = 1, x.runs, time.Since(start), o.Virtual
		t.Logf("sim %s: replay %s: %d steps, virtual %v\n%s", sc.Name, b.replay, o.Steps, o.Virtual, o.Trace)
		if o.Failure != nil {
			res.Failure = &Report{Original: o, Shrunk: o, Seeds: 1, Wall: res.Wall, Virtual: o.Virtual, Command: replayCommand(t, o.Token)}
		}
		return res
	}
	for i := 0; i < b.seeds; i++ {
		if i > 0 && b.time > 0 && time.Since(start) > b.time {
			break
		}
		seed := b.first + uint64(i)
		o := x.evaluate(plan{seed: seed, explore: true})
		res.Seeds++
		res.Virtual += o.Virtual
		if o.Failure != nil {
			rp := &Report{Original: o, Seeds: res.Seeds, Wall: time.Since(start), Virtual: res.Virtual}
			before := x.runs
			rp.Shrunk = x.shrink(o, b.shrinkTime)
			rp.ShrinkRuns = x.runs - before
			rp.Command = replayCommand(t, rp.Shrunk.Token)
			res.Failure = rp
			break
		}
	}
	res.Runs, res.Wall = x.runs, time.Since(start)
	if res.Failure != nil {
		t.Logf("sim %s: FAILED after %d seeds (%d runs) in %v (%.1f seeds/s):\n%s", sc.Name, res.Seeds, res.Runs, res.Wall.Round(time.Millisecond), res.SeedsPerSecond(), res.Failure)
	} else {
		t.Logf("sim %s: %d seeds (seeds %d-%d, %d runs) passed in %v wall, %v virtual: %.1f seeds/s", sc.Name, res.Seeds, b.first, b.first+uint64(max(res.Seeds, 1)-1), res.Runs, res.Wall.Round(time.Millisecond), res.Virtual.Round(time.Millisecond), res.SeedsPerSecond())
	}
	return res
}

// Test explores the scenario (Explore) and fails t with the report of the
// first failure found.
func Test(t *testing.T, sc Scenario) Result {
	t.Helper()
	res := Explore(t, sc)
	if res.Failure != nil {
		t.Fatalf("sim %s failed:\n%s", sc.Name, res.Failure)
	}
	return res
}

// RunSeed runs one seed of the scenario, as Explore would (schedule and
// faults drawn from the seed), without the reference comparison, and
// returns its outcome: two calls with one seed give the same trace.
func RunSeed(t *testing.T, sc Scenario, seed uint64) *Outcome {
	t.Helper()
	return execute(t, &sc, plan{seed: seed, explore: true})
}

// Replay runs the run a token names (a Report's Shrunk.Token, an
// Outcome's Token), with the reference comparison, and returns its
// outcome.
func Replay(t *testing.T, sc Scenario, token string) (*Outcome, error) {
	t.Helper()
	p, err := decodeToken(token)
	if err != nil {
		return nil, err
	}
	x := &explorer{t: t, sc: &sc, refs: map[string]*Outcome{}}
	return x.evaluate(p), nil
}

// replayCommand is the command that replays token in the calling test.
func replayCommand(t *testing.T, token string) string {
	return fmt.Sprintf("go test %s -run '%s' -count=1 -v -sim.replay=%s", callerPackage(), runPattern(t.Name()), token)
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
