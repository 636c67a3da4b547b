package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing/synctest"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// category is a kind of candidate step; the schedule first picks a
// category among those with candidates, then a candidate.
type category uint8

const (
	catEngine  category = iota // a delivery, a gate, a cache change, a relayed signal
	catOutside                 // the workload's next op, an outside destroy
	catTime                    // virtual time to the Runtime's next timer
)

// categoryWeights are the odds of each category when exploring.
var categoryWeights = [...]int{catEngine: 6, catOutside: 3, catTime: 1}

// candidate is one thing the schedule may do next. key orders the
// candidates of a step (the first is what a tape of zeros picks).
type candidate struct {
	cat   category
	key   string
	text  string
	actor string
	do    func()
	// write is set for a controller's write waiting at its gate (only in
	// the run that reproduces a recording), target is what it writes.
	write  bool
	target resource.PointerKey
	// pass is set for a Controller's pass or a QController's item
	// waiting at its gate, or waiting to be picked (pickingHolds).
	pass bool
	// item is the QController item of an item's gate (mapping is set for
	// a MapInput), or the item whose run makes a write (zero for a
	// Controller's).
	item    resource.PointerKey
	mapping bool
	// read is the world read that waits (World.Observed).
	read *readWait
	// early is set, in the run that reproduces a recording, for the
	// workload's next op while the run has not made the commits the
	// recording has before it, and for the step of time to that op, and
	// for the step that signals the world's relays again.
	early bool
	// resignal names the readers the step that signals the world's relays
	// again is for (resignalCandidate).
	resignal []string
}

// plan is what determines a run: the seed (the workload, and when
// exploring the schedule and the faults), the workload ops kept, and
// when replaying the tapes of the schedule and the faults.
type plan struct {
	seed uint64
	// keep lists the workload ops kept (indices); nil keeps all.
	keep    []int
	explore bool
	// sched and faults are the tapes replayed when not exploring: the
	// schedule's decisions and the step faults' decisions.
	sched, faults []uint32
	// writeFaults are the write faults replayed when not exploring, by
	// the write they hit (writeKey).
	writeFaults map[string]faultKind
	// noFaults turns every fault off (the reference run).
	noFaults bool
}

// incarnation is one Runtime of a run, with its state.
type incarnation struct {
	n      int
	st     state.State
	rt     *runtime.Runtime
	h      *holds
	cancel context.CancelFunc
	done   chan struct{}
	killed chan struct{}
	// dead is set when the Runtime is killed; protected by run.mu.
	dead bool
}

// run is one run of a scenario, inside its bubble.
type run struct {
	sc       *Scenario
	p        plan
	b        Bounds
	ctx      context.Context
	cancel   context.CancelFunc
	sys      System
	ops      []op
	opIndex  []int // the original index of each op
	next     int
	destroys []resource.Pointer
	sched    *stream
	faults   *stream
	// wfaults draws the write faults when exploring.
	wfaults *stream
	steps   int
	start   time.Time
	// convergeStart is when the workload ended (zero before);
	// lastOutside is when the workload last took a step.
	convergeStart, lastOutside time.Time
	logger                     *zap.Logger
	activity                   chan struct{}
	failure                    *Failure
	final                      *View
	inc                        *incarnation
	incs                       int
	// seedUsed is set when the world read the seed.
	seedUsed bool

	mu sync.Mutex
	// The fields below are protected by mu.
	committed    map[resource.Pointer]resource.Resource
	createdFloor time.Time
	outside      bool
	actor        string
	transcript   Transcript
	nFaults      int
	faultsActive bool
	// writes counts the controller writes by what they write (writeKey
	// without its count); wrote lists the write faults injected.
	writes        map[string]int
	wrote         map[string]faultKind
	killRequested bool
	mutations     []string
	relays        []*relay
	// commits are the commits of each resource, kept for the comparison
	// with a Recording (Scenario.MatchRecording).
	commits map[resource.PointerKey][]recordedCommit
	// controllerCommits counts the commits of the controllers (not the
	// workload's), when matching a recording; writers are the recorded
	// controllers' commits' writers, in order.
	controllerCommits int
	writers           []recordedWrite
	// allCommits counts every commit of the run (outside writers' too),
	// when matching a recording.
	allCommits int
	// departed says where a controller's commit first departed from the
	// recording's order (noteOrderLocked); empty before.
	departed string
	// reads are the recording's world reads by name, readNext the next
	// of each to hand out, readWaits the world reads waiting for their
	// turn (World.Observed).
	reads     map[string][]recordedRead
	readNext  map[string]int
	readWaits []*readWait
	// readers are the controllers that read each name (World.Observed),
	// once they read it; observers are those that will, from Setup on.
	readers, observers map[string]string
	// resignaled is, for each name, 1 + the index of the recorded read
	// that the world's relays were last signalled again for
	// (resignalCandidate).
	resignaled map[string]int
}

// Failure is a check that failed: which one, why, after which step.
type Failure struct {
	// Check names the check: "invariant <name>", "final", "reference",
	// "converge", "hot loop", "snapshot mutation", "goroutine leak",
	// "failing", "setup", "stop", "recording".
	Check string
	// Message says what failed.
	Message string
	// Step is the step after which it failed.
	Step int
	// Detail holds what does not belong in the transcript (goroutine stacks).
	Detail string
}

func (f *Failure) String() string { return f.Check + ": " + f.Message }

func newRun(sc *Scenario, p plan) *run {
	r := &run{
		sc:        sc,
		p:         p,
		b:         sc.Bounds.withDefaults(),
		activity:  make(chan struct{}, 1),
		committed: map[resource.Pointer]resource.Resource{},
		writes:    map[string]int{},
		wrote:     map[string]faultKind{},
		commits:   map[resource.PointerKey][]recordedCommit{},
		start:     time.Now(),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if p.explore {
		r.sched = newStream(p.seed, 0x5c4ed)
		r.faults = newStream(p.seed, 0xfa17)
		r.wfaults = newStream(p.seed, 0x3a17e)
	} else {
		r.sched = replayStream(p.sched)
		r.faults = replayStream(p.faults)
	}
	r.logger = newTraceLogger(r)
	r.faultsActive = !p.noFaults
	return r
}

// event appends an event to the trace.
func (r *run) event(what, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.eventLocked(what, text)
}

func (r *run) eventLocked(what, text string) {
	r.transcript = append(r.transcript, Entry{Step: r.steps, At: time.Since(r.start), What: what, Text: text})
}

// faultsOnLocked reports whether a fault among kinds may be injected now.
func (r *run) faultsOnLocked(kinds []faultKind) bool {
	return r.faultsActive && r.nFaults < r.sc.Faults.max() && r.sc.Faults.any(kinds)
}

// writeFaultLocked decides the fault of the controller write what by
// actor: drawn when exploring, replayed by the write it hit otherwise (a
// write fault stays on its write when shrinking drops others: the write
// is named by its actor, what it does, and how many such writes came
// before).
func (r *run) writeFaultLocked(actor, what string, crashable func() bool) faultKind {
	base := actor + "|" + what
	r.writes[base]++
	key := fmt.Sprintf("%s#%d", base, r.writes[base])
	if !r.faultsOnLocked(writeFaults) {
		return noFault
	}
	var f faultKind
	if r.p.explore {
		f = r.wfaults.fault(r.sc.Faults, writeFaults)
	} else if k, ok := r.p.writeFaults[key]; ok && r.sc.Faults.rate(k) > 0 {
		f = k
	}
	if f == faultCrash && !crashable() {
		f = noFault
	}
	if f != noFault {
		r.wrote[key] = f
	}
	return f
}

// faultedLocked counts and writes an injected fault in the transcript.
func (r *run) faultedLocked(text string) {
	r.nFaults++
	r.eventLocked("fault", text)
}

// ping tells the scheduler that something new waits for it.
func (r *run) ping() {
	select {
	case r.activity <- struct{}{}:
	default:
	}
}

func (r *run) drainPing() {
	select {
	case <-r.activity:
	default:
	}
}

// fail records the run's first failure.
func (r *run) fail(check, msg, detail string) {
	if r.failure != nil {
		return
	}
	r.failure = &Failure{Check: check, Message: msg, Step: r.steps, Detail: detail}
	r.event("check", r.failure.String())
}

// guard runs fn, user code run by the simulator (Setup, Register, an
// action, a check), and turns a panic into an error.
func guard(what string, fn func() error) (err error) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			err = fmt.Errorf("%s panicked: %s", what, usercode.Sprint(p.Value))
		}
	}()
	return fn()
}

// execute runs the run to its end: setup, the steps until the run
// converged or a check failed, the final checks, the stop.
func (r *run) execute() {
	defer r.cancel()
	base := bubbleGoroutines()
	if err := guard("Setup", func() (err error) {
		if r.sc.Setup == nil {
			return errors.New("the scenario has no Setup")
		}
		r.sys, err = r.sc.Setup(&World{r: r})
		if err == nil && r.sys.Register == nil {
			err = errors.New("the System that Setup returned has no Register")
		}
		return err
	}); err != nil {
		r.fail("setup", err.Error(), "")
		return
	}
	r.loadWorkload()
	r.lastOutside = time.Now()
	r.restoreRecorded()
	err := r.startEngine(true)
	if err == nil {
		err = r.checkRecordedKinds()
	}
	if err != nil {
		r.fail("setup", err.Error(), "")
		r.stopAll(base, false)
		return
	}
	r.loop()
	if r.failure == nil {
		r.finalChecks()
	}
	r.stopAll(base, r.failure == nil)
}

// loadWorkload draws the workload's steps and keeps those of the plan.
func (r *run) loadWorkload() {
	if r.sc.Workload == nil {
		return
	}
	all := r.sc.Workload.ops(r.p.seed, r.sys.Actions)
	if r.p.keep == nil {
		r.ops = all
		r.opIndex = make([]int, len(all))
		for i := range all {
			r.opIndex[i] = i
		}
		return
	}
	for _, i := range r.p.keep {
		if i >= 0 && i < len(all) {
			r.ops = append(r.ops, all[i])
			r.opIndex = append(r.opIndex, i)
		}
	}
}

// startEngine starts a Runtime over a fresh state restored from the
// committed state (with the scenario's initial resources, the first time).
func (r *run) startEngine(first bool) error {
	r.incs++
	inc := &incarnation{n: r.incs, done: make(chan struct{}), killed: make(chan struct{})}
	inc.st = inmem.NewState(inmem.WithPersistence(&persistence{r: r, inc: inc}), inmem.WithMutationDetector(r.mutated))
	if first {
		if err := r.writeInitial(inc.st); err != nil {
			return err
		}
	}
	inc.h = newHolds(r, inc)
	var s sched.Scheduler = inc.h
	if r.matching() {
		s = pickingHolds{inc.h}
	}
	opts := append(slices.Clone(r.sc.Options), testhook.WithScheduler(s).(runtime.Option))
	rt, err := runtime.New(inc.st, r.logger, opts...)
	if err != nil {
		return fmt.Errorf("runtime.New: %w", err)
	}
	inc.rt = rt
	if err := guard("Register", func() error { return r.sys.Register(rt) }); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	inc.cancel = cancel
	r.inc = inc
	// Recorded before Run starts: what Run logs as it starts (a WARN about
	// an input kind no controller writes) comes after it in every replay.
	r.event("Runtime", fmt.Sprintf("Runtime %d started", inc.n))
	go func() {
		defer close(inc.done)
		_ = rt.Run(ctx)
	}()
	return nil
}

// writeInitial creates the scenario's initial resources.
func (r *run) writeInitial(st state.State) error {
	r.setOutside(true, "initial")
	defer r.setOutside(false, "")
	for _, res := range r.sc.Initial {
		if err := st.Create(r.ctx, res.DeepCopy()); err != nil {
			return fmt.Errorf("initial %s: %w", resource.String(res), err)
		}
	}
	return nil
}

func (r *run) setOutside(on bool, actor string) {
	r.mu.Lock()
	r.outside, r.actor = on, actor
	r.mu.Unlock()
}

// stopEngine kills the current Runtime: everything it held is dropped, a
// writer waiting after a killed write gets its error, and the Runtime's
// goroutines must exit within a minute (virtual).
func (r *run) stopEngine() bool {
	inc := r.inc
	if inc == nil {
		return true
	}
	r.mu.Lock()
	inc.dead = true
	r.mu.Unlock()
	inc.h.stop()
	// The Runtime's context first: a writer that gets its error after the
	// kill then sees the Runtime stopping, as after a real kill it would see
	// nothing at all, and logs no failure (with the context canceled after,
	// whether it logged raced with this goroutine, and one seed's transcript
	// could differ from one run to the next).
	inc.cancel()
	close(inc.killed)
	t := time.NewTimer(time.Minute)
	defer t.Stop()
	select {
	case <-inc.done:
		r.inc = nil
		return true
	case <-t.C:
		r.fail("stop", fmt.Sprintf("Runtime %d did not stop within a minute of its cancel: a controller does not return when its context is done", inc.n), goroutineReport(nil))
		return false
	}
}

// restart kills the Runtime and starts a new one.
func (r *run) restart(why string) {
	r.event("Runtime", fmt.Sprintf("Runtime %d killed (%s)", r.inc.n, why))
	if !r.stopEngine() {
		return
	}
	r.mu.Lock()
	r.killRequested = false
	r.mu.Unlock()
	if err := r.startEngine(false); err != nil {
		r.fail("setup", "restart: "+err.Error(), "")
	}
}

// loop takes steps until the run converged or a check failed.
func (r *run) loop() {
	for {
		synctest.Wait()
		r.drainPing()
		if r.failure != nil {
			return
		}
		r.mu.Lock()
		kill := r.killRequested
		r.mu.Unlock()
		if kill {
			r.restart("a write committed and the Runtime died before its writer knew")
			continue
		}
		if !r.checkStep() {
			return
		}
		r.endWorkload()
		if r.stepFault() {
			continue
		}
		cands := r.candidates()
		if len(cands) == 0 {
			if r.quiet() {
				return
			}
			continue
		}
		if !r.withinBounds(cands) {
			return
		}
		c, guided := r.guide(cands)
		if !guided {
			c = r.pick(r.unheld(cands))
		}
		r.mu.Lock()
		r.steps++
		r.actor = c.actor
		r.eventLocked("step", c.text)
		r.mu.Unlock()
		c.do()
		time.Sleep(r.b.StepTime)
	}
}

// endWorkload ends the faults once every workload op was taken: the
// Runtime must converge from there.
func (r *run) endWorkload() {
	if !r.convergeStart.IsZero() || r.next < len(r.ops) {
		return
	}
	r.convergeStart = time.Now()
	r.mu.Lock()
	r.faultsActive = false
	r.eventLocked("Runtime", "workload done: no more faults; converging")
	r.mu.Unlock()
}

// stepFault injects a fault between two steps, if the faults stream says
// so: a restart of the Runtime, or a re-list of one of its input kinds.
func (r *run) stepFault() bool {
	r.mu.Lock()
	on := r.faultsOnLocked(stepFaults)
	var f faultKind
	if on {
		f = r.faults.fault(r.sc.Faults, stepFaults)
	}
	r.mu.Unlock()
	switch f {
	case faultRestart:
		r.mu.Lock()
		r.steps++
		r.faultedLocked("restart of the Runtime")
		r.mu.Unlock()
		r.restart("fault")
		return true
	case faultRelist:
		kinds := r.inputKinds()
		if len(kinds) == 0 {
			return false
		}
		k := kinds[r.faults.pick(len(kinds))]
		r.mu.Lock()
		r.steps++
		r.faultedLocked("re-list of " + k.String())
		r.mu.Unlock()
		r.inc.h.flushCache(k)
		ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
		defer cancel()
		if err := r.inc.rt.Relist(ctx, k); err != nil {
			r.event("log", "re-list of "+k.String()+": "+err.Error())
		}
		return true
	}
	return false
}

// inputKinds returns the input kinds of the Runtime, sorted.
func (r *run) inputKinds() []resource.KindKey {
	g, err := r.inc.rt.GetDependencyGraph()
	if err != nil {
		return nil
	}
	var out []resource.KindKey
	for _, e := range g.Edges {
		if e.EdgeType >= controller.EdgeInputStrong {
			out = append(out, resource.KindOf(resource.NewKind(e.ResourceNamespace, e.ResourceType)))
		}
	}
	slices.SortFunc(out, resource.KindKey.Compare)
	return slices.Compact(out)
}

// candidates lists what may happen next, sorted by category and key.
func (r *run) candidates() []candidate {
	out := r.inc.h.pickCandidates(r.inc.h.candidates(nil))
	r.mu.Lock()
	relays := slices.Clone(r.relays)
	r.mu.Unlock()
	for _, rl := range relays {
		if rl.isPending() {
			out = append(out, candidate{cat: catEngine, key: "5 signal " + rl.name, text: "signal " + rl.name, actor: "after signal " + rl.name, do: rl.signal})
		}
	}
	out = r.outsideCandidates(out)
	out = r.readCandidates(out)
	out = r.resignalCandidate(out)
	due, ok := r.nextTimer()
	what := "the Runtime's next timer"
	if next, opDue := r.dueTime(); opDue && (!ok || next.Before(due)) {
		due, ok, what = next, true, "the workload's next op"
	}
	if ok {
		d := time.Until(due)
		out = append(out, candidate{cat: catTime, key: "time", text: fmt.Sprintf("advance time by %v to %s", d, what), actor: "timers", do: func() { time.Sleep(d) },
			early: what == "the workload's next op" && r.matching() && !r.eager(r.ops[r.next])})
	}
	for i := range out {
		if out[i].actor == "" {
			out[i].actor = actorOf(out[i].text)
		}
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Or(cmp.Compare(a.cat, b.cat), cmp.Compare(a.key, b.key)) })
	return out
}

// actorOf names who acts in a step of the Runtime, from its text.
func actorOf(text string) string {
	switch {
	case strings.HasPrefix(text, "start "), strings.HasPrefix(text, "pass "):
		return text[strings.IndexByte(text, ' ')+1:]
	case strings.HasPrefix(text, "Reconcile "), strings.HasPrefix(text, "MapInput "):
		return text[strings.LastIndex(text, " of ")+4:]
	default:
		return "Runtime"
	}
}

// outsideCandidates appends the outside writer's candidates: the
// workload's next step, and the destroys of the resources it removed whose
// finalizers are gone.
func (r *run) outsideCandidates(out []candidate) []candidate {
	kept := r.destroys[:0]
	for _, ptr := range r.destroys {
		r.mu.Lock()
		cur, ok := r.committed[ptr]
		r.mu.Unlock()
		if !ok {
			continue // gone
		}
		kept = append(kept, ptr)
		if cur.Metadata().Finalizers().Empty() {
			out = append(out, candidate{
				cat: catOutside, key: "0 " + resource.PointerString(ptr), text: "outside: destroy " + resource.PointerString(ptr), actor: "outside",
				do: func() { r.lastOutside = time.Now(); r.destroy(ptr) },
			})
		}
	}
	r.destroys = kept
	if r.next < len(r.ops) && !r.waitsForDestroy(r.ops[r.next]) {
		i := r.next
		o := r.ops[i]
		c := candidate{
			cat: catOutside, key: "1", text: fmt.Sprintf("workload #%d: %s", r.opIndex[i], o), actor: "outside",
			do: func() { r.next++; r.lastOutside = time.Now(); r.apply(o) },
		}
		switch {
		case r.eager(o):
			c.cat, c.key = catEngine, " op" // first of all: as the recording has it
			out = append(out, c)
		case r.due(o):
			c.early = r.matching()
			out = append(out, c)
		}
	}
	return out
}

// waitsForDestroy reports whether o writes a resource the workload
// removed and that is not destroyed yet: the outside writer removes a
// resource as TeardownAndDestroy does, and writes it again only after.
func (r *run) waitsForDestroy(o op) bool {
	var ptr resource.Pointer
	switch o.verb {
	case verbSet:
		md := o.fixed.Metadata()
		ptr = resource.NewPointer(md.Namespace(), md.Type(), md.ID())
	case verbRemove:
		ptr = o.ptr
	default:
		return false
	}
	return slices.Contains(r.destroys, ptr)
}

// nextTimer returns the Runtime's earliest timer (a controller's restart,
// a delayed QController item), if any is set in the future.
func (r *run) nextTimer() (time.Time, bool) {
	a := testhook.Of(r.inc.rt).Activity(r.ctx)
	now := time.Now()
	var next time.Time
	for _, c := range a.Controllers {
		if c.NextDue.After(now) && (next.IsZero() || c.NextDue.Before(next)) {
			next = c.NextDue
		}
	}
	return next, !next.IsZero()
}

// pick chooses the step: a category by weight, then a candidate.
func (r *run) pick(cands []candidate) candidate {
	var cats []category
	var ws []int
	for _, c := range cands {
		if len(cats) == 0 || cats[len(cats)-1] != c.cat {
			cats = append(cats, c.cat)
			ws = append(ws, categoryWeights[c.cat])
		}
	}
	cat := cats[r.sched.weighted(ws)]
	var in []candidate
	for _, c := range cands {
		if c.cat == cat {
			in = append(in, c)
		}
	}
	return in[r.sched.pick(len(in))]
}

// withinBounds fails the run when it took too many steps, or did not
// converge in time.
func (r *run) withinBounds(cands []candidate) bool {
	if r.steps >= r.b.Steps {
		r.fail("converge", fmt.Sprintf("no convergence after %d steps (a hot loop?): still to do: %s%s", r.steps, candidateList(cands), r.failing()), "")
		return false
	}
	if !r.convergeStart.IsZero() {
		if d := time.Since(r.convergeStart); d > r.b.Converge {
			r.fail("converge", fmt.Sprintf("no convergence %v after the workload ended: still to do: %s%s", r.b.Converge, candidateList(cands), r.failing()), "")
			return false
		}
		return true
	}
	if r.next < len(r.ops) && r.waitsForDestroy(r.ops[r.next]) && time.Since(r.lastOutside) > r.b.Converge {
		r.fail("converge", fmt.Sprintf("the workload waited %v for a destroy: %s; still to do: %s%s", r.b.Converge, r.stuckDestroys(), candidateList(cands), r.failing()), "")
		return false
	}
	return true
}

// stuckDestroys names the resources the workload removed and that are
// not destroyed yet, with their finalizers.
func (r *run) stuckDestroys() string {
	var parts []string
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ptr := range r.destroys {
		if cur, ok := r.committed[ptr]; ok {
			parts = append(parts, fmt.Sprintf("%s (finalizers %v)", resource.PointerString(ptr), []resource.Finalizer(*cur.Metadata().Finalizers())))
		}
	}
	return strings.Join(parts, ", ")
}

func candidateList(cands []candidate) string {
	const most = 8
	var parts []string
	for i, c := range cands {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(cands)-most))
			break
		}
		parts = append(parts, c.text)
	}
	return strings.Join(parts, "; ")
}

// quiet is called when nothing is left to do and no timer of the Runtime
// is set: in the workload phase that cannot be (the next workload op is
// a candidate) unless only destroys wait for finalizers; once the
// workload ended, the Runtime converged if it stays quiet for Bounds.Quiet
// — a timer of user code that fires meanwhile and leads to something to
// do wakes the scheduler up. It reports whether the run is over.
func (r *run) quiet() bool {
	if r.convergeStart.IsZero() {
		r.endWorkload()
	}
	since := time.Now()
	t := time.NewTimer(r.b.Quiet)
	defer t.Stop()
	select {
	case <-r.activity:
		r.event("Runtime", fmt.Sprintf("woken after %v of quiet", time.Since(since)))
		return false
	case <-t.C:
	}
	if d := since.Sub(r.convergeStart); d > r.b.Converge {
		r.fail("converge", fmt.Sprintf("converged %v after the workload ended, later than %v", d, r.b.Converge), "")
		return true
	}
	r.event("Runtime", fmt.Sprintf("converged %v after the workload ended (quiet for %v)", since.Sub(r.convergeStart), r.b.Quiet))
	return true
}

// apply takes one workload op, as the outside writer.
func (r *run) apply(o op) {
	r.setOutside(true, "outside")
	defer r.setOutside(false, "")
	st := r.inc.st
	switch o.verb {
	case verbSet:
		r.set(st, o.fixed)
	case verbRemove:
		r.mu.Lock()
		cur, ok := r.committed[o.ptr]
		r.mu.Unlock()
		switch {
		case !ok:
			r.event("log", "outside: "+resource.PointerString(o.ptr)+" is absent: nothing to remove")
		case cur.Metadata().Phase() == resource.PhaseTearingDown:
			r.event("log", "outside: "+resource.PointerString(o.ptr)+" is tearing down already")
		default:
			if _, err := st.Teardown(r.ctx, o.ptr); err != nil {
				r.event("log", "outside: teardown "+resource.PointerString(o.ptr)+": "+err.Error())
				return
			}
			r.destroys = append(r.destroys, o.ptr)
		}
	case verbDo:
		i := slices.IndexFunc(r.sys.Actions, func(a Action) bool { return a.Name == o.action })
		if i < 0 {
			r.event("log", "outside: no action "+o.action)
			return
		}
		a := r.sys.Actions[i]
		if err := guard("action "+a.Name, func() error { return a.Do(r.ctx) }); err != nil {
			r.event("log", "outside: action "+a.Name+": "+err.Error())
		}
	}
}

// set makes want exist: created, or its spec, labels and annotations
// written over the stored resource.
func (r *run) set(st state.State, want resource.Resource) {
	ptr := resource.PointerOf(want.Metadata())
	r.mu.Lock()
	cur, ok := r.committed[resource.NewPointer(ptr.Namespace(), ptr.Type(), ptr.ID())]
	r.mu.Unlock()
	res := want.DeepCopy()
	var err error
	switch {
	case !ok:
		err = st.Create(r.ctx, res)
	case cur.Metadata().Phase() == resource.PhaseTearingDown:
		r.event("log", "outside: "+resource.PointerString(ptr)+" is tearing down: left alone")
		return
	default:
		md := cur.Metadata().Copy()
		for k := range md.Labels().Raw() {
			md.Labels().Delete(k)
		}
		for k, v := range res.Metadata().Labels().Raw() {
			md.Labels().Set(k, v)
		}
		for k := range md.Annotations().Raw() {
			md.Annotations().Delete(k)
		}
		for k, v := range res.Metadata().Annotations().Raw() {
			md.Annotations().Set(k, v)
		}
		*res.Metadata() = md
		err = st.Update(r.ctx, res, state.WithUpdateOwner(md.Owner()))
	}
	if err != nil {
		r.event("log", "outside: set "+resource.PointerString(ptr)+": "+err.Error())
	}
}

// destroy destroys a resource the workload removed, its finalizers gone.
func (r *run) destroy(ptr resource.Pointer) {
	r.setOutside(true, "outside")
	defer r.setOutside(false, "")
	if err := r.inc.st.Destroy(r.ctx, ptr); err != nil {
		r.event("log", "outside: destroy "+resource.PointerString(ptr)+": "+err.Error())
		return
	}
	r.destroys = slices.DeleteFunc(r.destroys, func(p resource.Pointer) bool { return p == ptr })
}

// mutated is the state's mutation detector report.
func (r *run) mutated(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mutations = append(r.mutations, err.Error())
}

// checkStep makes the checks of every step: no mutated snapshot, the
// invariants, no hot loop. It reports whether they passed.
func (r *run) checkStep() bool {
	r.mu.Lock()
	muts := slices.Clone(r.mutations)
	r.mu.Unlock()
	if len(muts) > 0 {
		r.fail("snapshot mutation", strings.Join(muts, "; "), "")
		return false
	}
	v := View{res: r.committed}
	for _, inv := range slices.Concat(r.sc.Invariants, r.sys.Invariants) {
		if err := guard("invariant "+inv.Name, func() error { return inv.Check(v) }); err != nil {
			r.fail("invariant "+inv.Name, err.Error(), "")
			return false
		}
	}
	if loops := r.inc.rt.Observe().HotLoops(); len(loops) > 0 {
		var parts []string
		for _, l := range loops {
			parts = append(parts, fmt.Sprintf("%s (%.0f commits/s)", l.Cycle, l.Rate))
		}
		r.fail("hot loop", "the Runtime reports a hot loop: "+strings.Join(parts, "; "), "")
		return false
	}
	return true
}

// finalChecks checks the converged state: a run that must match its
// recording matched it, the user's final checks, no controller failing,
// no removal left waiting. A departure from the recording is checked
// first: the world's reads of such a run are the recording's, so once it
// departed its final state says nothing about the daemon.
func (r *run) finalChecks() {
	v := View{res: r.committed}.snapshot()
	r.final = &v
	if r.matching() {
		if err := r.matchRecording(); err != nil {
			r.fail("recording", err.Error(), "")
			return
		}
	}
	for _, f := range []func(View) error{r.sc.Final, r.sys.Final} {
		if f == nil {
			continue
		}
		if err := guard("Final", func() error { return f(v) }); err != nil {
			r.fail("final", err.Error(), "")
			return
		}
	}
	for _, c := range r.inc.rt.Observe().Controllers() {
		if c.FailingItems > 0 || c.ParkedItems > 0 {
			r.fail("failing", fmt.Sprintf("%s converged with %d failing items (%d parked); last error: %s", c.Name, c.FailingItems, c.ParkedItems, c.LastError), "")
			return
		}
	}
	for _, ptr := range r.destroys {
		if cur, ok := v.Get(ptr); ok {
			r.fail("final", fmt.Sprintf("%s was removed by the workload and is still there: finalizers %v never went", resource.PointerString(ptr), []resource.Finalizer(*cur.Metadata().Finalizers())), "")
			return
		}
	}
}

// stopAll ends the run: the Runtime and the world's goroutines stop, and
// no goroutine the run started may be left (checked when leaks is set).
func (r *run) stopAll(base map[string]bool, leaks bool) {
	r.cancel()
	if !r.stopEngine() {
		return
	}
	synctest.Wait()
	if !leaks {
		return
	}
	if left := leftGoroutines(base); len(left) > 0 {
		r.fail("goroutine leak", fmt.Sprintf("%d goroutines of the run were left after the Runtime stopped and the world's context was canceled", len(left)), strings.Join(left, "\n\n"))
	}
}
