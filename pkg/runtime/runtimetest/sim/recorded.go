package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/internal/graphkinds"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
)

// A Scenario with a Recording replays what a daemon's flight recorder
// (package recording) kept: its starting state is the recording's (every
// resource as it was, versions, owners, finalizers and phases included,
// in place of Initial), and its workload is the recording's outside
// changes and world actions (in place of Workload) at their recorded
// times. Then Test explores orderings and faults around it and shrinks
// what fails, as for any workload.

// recordedWorkload is the workload of a recording: each outside change
// and world action as an op at its recorded time.
type recordedWorkload []op

func (w recordedWorkload) ops(uint64, []Action) []op { return w }

// recordedOps turns a recording's outside changes and world actions into
// ops: a create or an update is a Set of the recorded resource, a
// teardown a Remove (which destroys the resource once its finalizers are
// gone, so the recorded destroy that follows is part of it), a destroy
// of a resource not torn down by the recording a Remove, an action a Do.
// A world read is no op: it is returned with where it was read.
func recordedOps(rec *recording.Recording) (recordedWorkload, map[string][]recordedRead) {
	var out recordedWorkload
	reads := map[string][]recordedRead{}
	removed := map[resource.PointerKey]bool{}
	commits, all := 0, 0
	for _, c := range rec.Changes {
		if c.By == recording.ByWorld && c.Op == recording.OpRead {
			reads[c.Action] = append(reads[c.Action], recordedRead{value: c.Value, commits: all, ops: len(out)})
			continue
		}
		before := all
		if c.By != recording.ByWorld {
			all++
		}
		if c.By == recording.ByController {
			commits++
			continue
		}
		o := op{at: c.Offset, after: commits, pos: before}
		switch {
		case c.By == recording.ByWorld:
			o.verb, o.action = verbDo, c.Action
		case c.Op == recording.OpCreate || c.Op == recording.OpUpdate:
			o.verb, o.fixed, o.sensitive = verbSet, c.Resource, rec.Sensitive(c.Pointer)
			removed[c.Pointer] = false
		case c.Op == recording.OpDestroy && removed[c.Pointer]:
			continue
		default:
			o.verb, o.ptr = verbRemove, resource.NewPointer(c.Pointer.Namespace(), c.Pointer.Type(), c.Pointer.ID())
			removed[c.Pointer] = true
		}
		out = append(out, o)
	}
	return out, reads
}

// withRecording returns the scenario a Recording describes: its
// starting state and its workload (an error when the scenario also sets
// its own).
func withRecording(sc Scenario) (Scenario, error) {
	if sc.Recording == nil {
		return sc, nil
	}
	if sc.Workload != nil || len(sc.Initial) > 0 {
		return sc, errors.New("sim: a scenario with a Recording takes its starting state and workload from it: it sets no Initial or Workload")
	}
	if sc.MatchRecording && sc.Recording.Coalesced > 0 {
		return sc, fmt.Errorf("sim: the recording cannot be matched: its recorder fell behind and saw %d changes coalesced", sc.Recording.Coalesced)
	}
	sc.Workload, _ = recordedOps(sc.Recording)
	return sc, nil
}

// loadRecording sets the scenario's Recording from the -sim.recording
// file (or RESGRAPH_SIM_RECORDING), decoded with its Codec, and turns it
// into the scenario's starting state and workload.
func loadRecording(sc Scenario, path string) (Scenario, error) {
	if path != "" {
		if sc.Codec == nil {
			return sc, fmt.Errorf("sim: -sim.recording=%s: the scenario %q has no Codec to decode it with", path, sc.Name)
		}
		rec, err := recording.ReadFile(path, sc.Codec)
		if errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(path) {
			return sc, fmt.Errorf("sim: -sim.recording=%s: %w (a relative path is relative to the test's package directory, where go test runs it: give an absolute path)", path, err)
		}
		if err != nil {
			return sc, fmt.Errorf("sim: -sim.recording=%s: %w", path, err)
		}
		sc.Recording, sc.Initial, sc.Workload = rec, nil, nil
	}
	return withRecording(sc)
}

// restoreRecorded puts the recording's starting state in the committed
// state, as it was (the first Runtime's state is restored from it).
func (r *run) restoreRecorded() {
	rec := r.sc.Recording
	if rec == nil {
		return
	}
	r.writers = recordedWriters(rec)
	r.mu.Lock()
	_, r.reads = recordedOps(rec)
	defer r.mu.Unlock()
	for _, res := range rec.Initial {
		md := res.Metadata()
		r.committed[resource.NewPointer(md.Namespace(), md.Type(), md.ID())] = res.DeepCopy()
		if c := md.Created(); c.After(r.createdFloor) {
			r.createdFloor = c
		}
	}
}

// checkRecordedKinds fails the run when the daemon's controllers read or
// write a kind the recording does not hold: it was recorded by another
// daemon (or version of it), and its starting state would lack what they
// read.
func (r *run) checkRecordedKinds() error {
	rec := r.sc.Recording
	if rec == nil {
		return nil
	}
	g, err := r.inc.rt.GetDependencyGraph()
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range graphkinds.Kinds(g) {
		if !slices.ContainsFunc(rec.Kinds, func(rk recording.Kind) bool { return rk.Namespace == k.Namespace() && rk.Type == k.Type() }) {
			missing = append(missing, resource.KindString(k))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the recording holds no %s, which the daemon's controllers read or write: it was recorded by another daemon, or another version of it", strings.Join(missing, ", "))
	}
	return nil
}

// due reports whether op o may be taken now: at its recorded time.
func (r *run) due(o op) bool { return !time.Now().Before(r.start.Add(o.at)) }

// matching reports whether the run is the reference run of a recording
// it must reproduce (Scenario.MatchRecording): its recorded ops are then
// taken as the recording ordered them among the controllers' commits.
func (r *run) matching() bool {
	return r.sc.Recording != nil && r.sc.MatchRecording && r.p.noFaults && r.p.keep == nil
}

// eager reports whether recorded op o is to be taken before anything
// else: when matching, once the run made as many controllers' commits as
// the recording has before it, whatever the time (the recording's order
// is what the reference run reproduces).
func (r *run) eager(o op) bool {
	if !r.matching() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.controllerCommits >= o.after
}

// dueTime is when the workload's next op is due, when it is not yet.
func (r *run) dueTime() (time.Time, bool) {
	if r.next >= len(r.ops) || r.due(r.ops[r.next]) {
		return time.Time{}, false
	}
	return r.start.Add(r.ops[r.next].at), true
}

// guide picks the step of a run that reproduces a recording (matching),
// each controller's commit a step of its own (sched.GateWrite): a
// recorded op that is due as the recording ordered it; else a
// controller's start or RunHook (every controller starts with the
// Runtime); else a world read whose recorded value is due (World.Observed);
// else a pass (or item) of a controller whose next commit in the
// recording was made by a pass that read the state the run is at now
// (it reads now, and stops at its first write) — of a QController, the
// item the recording says made it; else the write of the commit that
// comes next in the recording, when its writer waits at it; else its
// writer's pass, item or start; else a step of the Runtime's own (a
// delivery, a cache change, a relayed signal) rather than another
// controller's pass; else a write the recording does not have (one that
// commits nothing); else a write of the controller whose commit comes
// next, of a QController the same item's (its pass stopped at another
// write first). It reports false when
// it has no preference (the schedule picks, among what unheld leaves). A
// wake-up offered to a Controller in the middle of a pass is never its
// pick (midPass).
func (r *run) guide(cands []candidate) (candidate, bool) {
	if !r.matching() || len(cands) == 0 {
		return candidate{}, false
	}
	cands = offersBetweenPasses(cands)
	if len(cands) == 0 {
		return candidate{}, false
	}
	if cands[0].key == " op" {
		return r.beforeOp(cands)
	}
	for _, c := range cands {
		if strings.HasPrefix(c.key, "0 start ") || strings.HasPrefix(c.key, "0 hook ") {
			return c, true // every controller starts with the Runtime
		}
	}
	for _, c := range cands {
		if c.read != nil && r.readDue(c.read) {
			return c, true // the world is read where it was read when recorded
		}
	}
	r.mu.Lock()
	i, pos := r.controllerCommits, r.allCommits
	r.mu.Unlock()
	for _, c := range cands {
		if w, ok := r.passWrite(c, i); c.pass && ok && w.read >= 0 && w.read <= pos {
			return c, true
		}
	}
	if c, ok := r.deliveryForPassNow(cands, i, pos); ok {
		return c, true
	}
	if i < len(r.writers) {
		if c, ok := r.nextCommitStep(cands, r.writers[i], pos); ok {
			return c, true
		}
		if c, ok := resignalFor(cands, r.writers[i].writer); ok {
			return c, true // its reader waits for a signal the replay's world did not make
		}
	}
	for _, c := range cands {
		if c.cat == catEngine && (c.actor == "Runtime" || strings.HasPrefix(c.actor, "after signal ")) {
			return c, true
		}
	}
	for _, c := range cands {
		if c.write && !r.heldFor(c, i) {
			return c, true
		}
	}
	if i < len(r.writers) {
		for _, c := range cands {
			if c.write && c.actor == r.writers[i].writer && sameItem(c, r.writers[i]) {
				return c, true // its next commit waits behind it
			}
		}
	}
	return candidate{}, false
}

// beforeOp picks, when the recorded op that is next may be taken (eager),
// what the recording has before it: a controller's start or RunHook,
// else a pass (or item) whose state has come and that read the state
// before the op (the op's commit is not in what it read), else a
// delivery that may wake a pass that read the state the run is at now
// (deliveryForPassNow), else a world read the recording has before it
// (readBeforeOp). It reports false otherwise: the op is taken.
func (r *run) beforeOp(cands []candidate) (candidate, bool) {
	for _, c := range cands {
		if strings.HasPrefix(c.key, "0 start ") || strings.HasPrefix(c.key, "0 hook ") {
			return c, true
		}
	}
	opPos := r.ops[r.next].pos
	r.mu.Lock()
	i, pos := r.controllerCommits, r.allCommits
	r.mu.Unlock()
	for _, c := range cands {
		if w, ok := r.passWrite(c, i); c.pass && ok && w.read >= 0 && w.read <= pos && w.read <= opPos {
			return c, true
		}
	}
	if pos <= opPos {
		if c, ok := r.deliveryForPassNow(cands, i, pos); ok {
			return c, true
		}
	}
	return r.readBeforeOp(cands)
}

// readBeforeOp picks, before the recorded op that is next, while the
// recording has a world read before it not handed out yet
// (World.Observed): a read that waits and is due, else a world fake's
// signal, which wakes its reader, else a write of the reader that the
// recording says commits nothing (its pass read before the read not
// handed out, which the reader's next recorded commit comes after): the
// reader's pass ends, and it reads again. Otherwise the op would wake the
// reader while it is still in its pass: once, for what woke it twice when
// recorded. It reports false when there is none.
func (r *run) readBeforeOp(cands []candidate) (candidate, bool) {
	r.mu.Lock()
	var readers []string // of the reads before the op not handed out
	for name, reads := range r.reads {
		if k := r.readNext[name]; k < len(reads) && reads[k].ops <= r.next && r.readBeforeCommitLocked(name, reads[k]) {
			readers = append(readers, r.readers[name])
		}
	}
	r.mu.Unlock()
	if len(readers) == 0 {
		return candidate{}, false
	}
	for _, c := range cands {
		if c.read != nil && r.readDue(c.read) {
			return c, true
		}
	}
	for _, c := range cands {
		if strings.HasPrefix(c.actor, "after signal ") {
			return c, true
		}
	}
	for _, c := range cands {
		if c.write && slices.Contains(readers, c.actor) {
			return c, true
		}
	}
	for _, by := range readers {
		if c, ok := resignalFor(cands, by); ok {
			return c, true
		}
	}
	return candidate{}, false
}

// readBeforeCommitLocked reports whether recorded read rr of name comes
// before the next recorded commit of its reader (true when no read of
// name was made yet, or the reader commits nothing more); called with
// r.mu held.
func (r *run) readBeforeCommitLocked(name string, rr recordedRead) bool {
	by, ok := r.readers[name]
	if !ok {
		return true
	}
	for _, w := range r.writers[min(r.controllerCommits, len(r.writers)):] {
		if w.writer == by {
			return rr.commits <= w.at
		}
	}
	return true
}

// deliveryForPassNow picks a delivery of the Runtime while a recorded
// commit from the i-th on was made by a pass that read the state the run
// is at now (pos): the event that wakes that pass (or queues its item)
// may be among them, and the next commit would move the run past the
// state it read.
func (r *run) deliveryForPassNow(cands []candidate, i, pos int) (candidate, bool) {
	if !slices.ContainsFunc(r.writers[min(i, len(r.writers)):], func(w recordedWrite) bool { return w.read == pos }) {
		return candidate{}, false
	}
	for _, c := range cands {
		if c.cat == catEngine && c.actor == "Runtime" && strings.HasPrefix(c.text, "deliver ") {
			return c, true
		}
	}
	return candidate{}, false
}

// midPass reports whether c offers a wake-up to a Controller that is in
// the middle of a pass: one of its writes waits at its gate, or one of its
// world reads waits, among cands. Offered then, the wake-up would wait in
// its channel and the next pass would read the state where the pass
// ends, not where the run is when it was offered.
func midPass(cands []candidate, c candidate) bool {
	if !c.pass || !strings.HasPrefix(c.key, "3 pass ") {
		return false
	}
	return slices.ContainsFunc(cands, func(o candidate) bool { return (o.write || o.read != nil) && o.actor == c.actor })
}

// offersBetweenPasses returns cands without the wake-ups offered to
// Controllers in the middle of a pass (midPass).
func offersBetweenPasses(cands []candidate) []candidate {
	if !slices.ContainsFunc(cands, func(c candidate) bool { return midPass(cands, c) }) {
		return cands
	}
	return slices.DeleteFunc(slices.Clone(cands), func(c candidate) bool { return midPass(cands, c) })
}

// sameItem reports whether candidate c (an item's gate or a write) may
// lead to the recorded commit w: the same QController item, unless
// either does not say (a Controller's pass, a MapInput, a recording that
// does not name the item).
func sameItem(c candidate, w recordedWrite) bool {
	return c.mapping || c.item == (resource.PointerKey{}) || w.item == (resource.PointerKey{}) || c.item == w.item
}

// nextCommitStep is the step that leads to the recorded commit next: its
// write, or its writer's gate (a pass only once the run is at the state
// it read).
func (r *run) nextCommitStep(cands []candidate, next recordedWrite, pos int) (candidate, bool) {
	for _, c := range cands {
		if c.write && c.target == next.ptr && (next.writer == "" || c.actor == next.writer) {
			return c, true
		}
	}
	if next.writer == "" {
		return candidate{}, false
	}
	for _, c := range cands {
		if !c.write && c.actor == next.writer && c.cat == catEngine && (!c.pass || next.read <= pos) && sameItem(c, next) {
			return c, true
		}
	}
	return candidate{}, false
}

// passWrite returns the next commit, from the i-th, that the pass or
// item of candidate c may lead to: its controller's next commit, of a
// QController's item the next one the recording says that item made.
func (r *run) passWrite(c candidate, i int) (recordedWrite, bool) {
	for _, w := range r.writers[min(i, len(r.writers)):] {
		if w.writer == c.actor && sameItem(c, w) {
			return w, true
		}
	}
	return recordedWrite{}, false
}

// heldFor reports whether write c waits for its turn: the recording
// has a commit of its writer to its target from the i-th on. A write the
// recording does not have commits nothing (a Modify that leaves its
// output as it is), or the replay departed from the recording.
func (r *run) heldFor(c candidate, i int) bool {
	for _, w := range r.writers[min(i, len(r.writers)):] {
		if w.ptr == c.target && (w.writer == c.actor || w.writer == "") {
			return true
		}
	}
	return false
}

// unheld leaves out of cands the writes that wait for their turn in the
// recording (heldFor), the passes (and QController items) whose next
// commit in the recording read a state the run is not at yet, the world
// reads whose value is not due yet, and the recorded op whose time came
// before the run made the commits the recording has before it (and the
// step of time to it), unless nothing else is left: an op is taken at
// its place among the commits, whatever the time. The step that signals
// the world's relays again is left out unless it is all there is (the
// guide takes it when its reader waits: resignalFor).
func (r *run) unheld(cands []candidate) []candidate {
	if !r.matching() {
		return cands
	}
	r.mu.Lock()
	i, pos := r.controllerCommits, r.allCommits
	r.mu.Unlock()
	out := slices.DeleteFunc(slices.Clone(cands), func(c candidate) bool {
		switch {
		case c.early || midPass(cands, c):
			return true
		case c.read != nil:
			return !r.readDue(c.read)
		case c.pass:
			w, ok := r.passWrite(c, i)
			return ok && w.read > pos
		}
		return c.write && r.heldFor(c, i)
	})
	if len(out) == 0 {
		return withoutResignal(cands)
	}
	return out
}

// recordedWrite is a controller's commit of a recording: its writer (""
// for a change of finalizers alone, unless the recording names its
// holder), what it wrote, and where its pass read the state: after how
// many of the recording's commits (outside writers' and controllers'),
// -1 when the recording does not say.
type recordedWrite struct {
	writer string
	ptr    resource.PointerKey
	read   int
	// item is the QController item whose run made it (zero: a
	// Controller's, or the recording does not say).
	item resource.PointerKey
	// at is how many of the recording's commits (outside writers' and
	// controllers') come before it.
	at int
}

// recordedWriters lists a recording's controllers' commits, in order.
func recordedWriters(rec *recording.Recording) []recordedWrite {
	// revs are the commits' revisions, sorted: a pass that read revision
	// r read the state after the commits at r or below. (A recording over
	// a routed state of several backends interleaves their commits, each
	// backend's in its order: its revisions are not in order.)
	var revs []uint64
	for _, c := range rec.Changes {
		if c.By != recording.ByWorld {
			revs = append(revs, c.Revision)
		}
	}
	slices.Sort(revs)
	reads := lastReads(rec)
	var out []recordedWrite
	at := 0
	for _, c := range rec.Changes {
		if c.By != recording.ByWorld {
			at++
		}
		if c.By == recording.ByController {
			w := recordedWrite{writer: c.Writer, ptr: c.Pointer, read: -1, item: c.Item, at: at - 1}
			if read := reads[len(out)]; read != 0 {
				w.read, _ = slices.BinarySearch(revs, read+1)
			}
			out = append(out, w)
		}
	}
	return out
}

// recordedCommit is a commit of a replay, as a recording would hold it:
// its version, the owner of an outside writer's commit, the writer of a
// controller's ("" when the recording does not name it).
type recordedCommit struct {
	version   uint64
	owner     string
	writer    string
	destroyed bool
}

func (c recordedCommit) String() string {
	switch {
	case c.destroyed:
		return fmt.Sprintf("destroyed at version %d", c.version)
	case c.writer != "":
		return fmt.Sprintf("version %d by %q", c.version, c.writer)
	default:
		return fmt.Sprintf("version %d owned by %q", c.version, c.owner)
	}
}

// noteCommit keeps a commit of the run, for the comparison with the
// recording; called with r.mu held.
func (r *run) noteCommitLocked(ptr resource.Pointer, prev, res resource.Resource) {
	if r.sc.Recording == nil || !r.sc.MatchRecording {
		return
	}
	key := resource.PointerOf(ptr)
	c := recordedCommit{destroyed: res == nil}
	if res == nil {
		c.version, c.owner = prev.Metadata().Version().Value(), prev.Metadata().Owner()
	} else {
		c.version, c.owner = res.Metadata().Version().Value(), res.Metadata().Owner()
	}
	if !r.outside {
		c.writer = r.actor
	}
	r.commits[key] = append(r.commits[key], c)
	r.allCommits++
	if !r.outside {
		r.noteOrderLocked(key)
		r.controllerCommits++
	}
}

// noteOrderLocked writes in the transcript the first controller's commit
// that is not the one the recording has next (where the replay first
// departs from the recording's order); called with r.mu held.
func (r *run) noteOrderLocked(key resource.PointerKey) {
	i := r.controllerCommits
	if r.departed != "" || !r.matching() {
		return
	}
	want := "nothing more"
	if i < len(r.writers) {
		if w := r.writers[i]; w.ptr == key && (w.writer == "" || w.writer == r.actor) {
			return
		} else {
			want = fmt.Sprintf("%s by %q", w.ptr, w.writer)
		}
	}
	r.departed = fmt.Sprintf("the replay departed from the recording's order at step %d: its controllers' commit %d is %s by %q, the recording's %s", r.steps, i+1, key, r.actor, want)
	r.eventLocked("recording", r.departed)
}

// matchRecording checks that the run reproduced the recording (rule of
// Scenario.MatchRecording): the same commits of each resource, in order
// (version, and the owner it wrote as), and the same final state.
func (r *run) matchRecording() error {
	rec := r.sc.Recording
	want := map[resource.PointerKey][]recordedCommit{}
	for _, c := range rec.Changes {
		if c.By == recording.ByWorld {
			continue
		}
		rc := recordedCommit{version: c.Version, destroyed: c.Op == recording.OpDestroy, writer: c.Writer}
		if c.Resource != nil {
			rc.owner = c.Resource.Metadata().Owner()
		}
		want[c.Pointer] = append(want[c.Pointer], rc)
	}
	for _, key := range sortedKeys(want, r.commits) {
		if err := sameCommits(key, want[key], r.commits[key]); err != nil {
			if r.departed != "" {
				return fmt.Errorf("%w (%s)", err, r.departed)
			}
			return err
		}
	}
	final := View{res: map[resource.Pointer]resource.Resource{}}
	for _, res := range rec.Final {
		md := res.Metadata()
		final.res[resource.NewPointer(md.Namespace(), md.Type(), md.ID())] = res
	}
	if err := sameResources(*r.final, final, r.sc.Canonical, r.sc.OrderedFinalizers); err != nil {
		return fmt.Errorf("the final state differs from the recording's: %w", err)
	}
	return nil
}

// sameCommits compares the commits of one resource: an outside writer's
// by the owner it wrote, a controller's by its writer — one the recording
// does not name (a change of finalizers alone) matches any.
func sameCommits(key resource.PointerKey, want, got []recordedCommit) error {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(got):
			return fmt.Errorf("%s: the recording has a commit %d (%s) the replay did not make", key, i+1, want[i])
		case i >= len(want):
			return fmt.Errorf("%s: the replay made a commit %d (%s) the recording does not have", key, i+1, got[i])
		case want[i].version != got[i].version || want[i].destroyed != got[i].destroyed ||
			!want[i].destroyed && (want[i].owner != "" && want[i].owner != got[i].owner || want[i].writer != "" && want[i].writer != got[i].writer):
			return fmt.Errorf("%s: commit %d is %s in the recording, %s in the replay", key, i+1, want[i], got[i])
		}
	}
	return nil
}

func sortedKeys(a, b map[resource.PointerKey][]recordedCommit) []resource.PointerKey {
	var out []resource.PointerKey
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(x, y resource.PointerKey) int { return comparePointers(x, y) })
	return out
}
