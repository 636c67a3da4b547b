package inmem

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The mutation detector (rule S7) keeps, beside every stored snapshot, a
// second copy made from the same source (the caller's resource, copied
// twice by the same DeepCopy, so both copies have the same shape), and
// compares the two, outside the kind's lock:
//   - when the resource is next written or destroyed: the version being
//     replaced and, while the history keeps the change that made it, the
//     one before it (the two an event of the latest change carries);
//   - when a change leaves the history: the version it replaced, which no
//     kept change refers to any more, a last time.
//
// The reference copy of a current version is kept by the kind (in
// detector.cur, with the change that made it); that of a replaced version
// in detector.refs at the ring index of the change that replaced it (whose
// record holds the version itself, record.old), until that change leaves
// the history. A write thus finds what to check with one lookup under the
// lock, and reads the versions after releasing it; the history's records
// are the same size with the detector off or on.
//
// A snapshot changed after its last check (it left the history, or the
// state was dropped: there is no finalizer to run a check then) is not
// reported.

// mutationEnv is the environment variable that overrides the default.
const mutationEnv = "RESGRAPH_MUTATION_DETECTOR"

// checkDefault reports which check of rule S7 is on by default: the
// detector in test binaries, the guard otherwise, unless
// RESGRAPH_MUTATION_DETECTOR says otherwise (0: neither; 1: the detector;
// guard: the guard, for measuring it in benchmarks).
func checkDefault() (detect, guard bool) {
	switch os.Getenv(mutationEnv) {
	case "0":
		return false, false
	case "1":
		return true, false
	case "guard":
		return false, true
	}
	return testing.Testing(), !testing.Testing()
}

// panicReport is the default report: a test that mutates a shared
// snapshot fails loudly.
func panicReport(err error) { panic(err) }

// MutationError is what the mutation detector reports: a shared snapshot
// was changed in place.
type MutationError struct {
	// Resource names the changed resource.
	Resource resource.Pointer
	// Version is the version of the snapshot that was changed.
	Version resource.Version
	// Path is the first changed part: "metadata.labels",
	// "spec.Items[2]", ...
	Path string
	// Was and Now describe the part as stored and as found.
	Was, Now string
	// Holders name the holders the snapshot was handed to (see
	// [state.SnapshotTracker]: the Runtime's controllers), in the order
	// they got it; empty when the state was not told of any.
	Holders []string
}

// Error implements error.
func (e *MutationError) Error() string {
	handed := "(watch event or read-only Get/List)"
	if len(e.Holders) > 0 {
		handed = "handed to " + strings.Join(e.Holders, ", ")
	}
	return fmt.Sprintf("inmem: mutation detector: %s@%s, a shared read-only snapshot %s, was changed in place: %s was %s, is %s; change a copy instead (DeepCopy, or Modify)",
		resource.PointerString(e.Resource), e.Version, handed, e.Path, e.Was, e.Now)
}

// current is the detector's view of a current version: its reference
// copy and the change that made it (seq; 0 when restored from
// persistence).
type current struct {
	ref resource.Resource
	seq uint64
}

// check is a comparison to run once the kind's lock is released: snap
// with ref, or, when rec is set (its seq is not 0), the version that the
// change rec replaced (rec.old) with its reference copy ref, taken from
// refs under the lock. rec is a copy: the ring's slot may be overwritten
// once the lock is released.
type check struct {
	snap, ref resource.Resource
	rec       record
}

// detector is the per-kind state of the mutation detector. Its fields but
// the marks are guarded by the kind store's mu; comparisons run outside
// it.
type detector struct {
	report func(error)
	// every is how many writes there are per reference copy: 1 for the
	// detector (and a persistent state's guard), guardSample for the
	// guard; writes counts the kind's writes that asked (see
	// referenceCopy).
	every  uint64
	writes atomic.Uint64
	// cur is the current version of every resource, updated in place by
	// a write (one lookup, no assignment).
	cur map[resource.ID]*current
	// refs are the reference copies of the versions the changes in the
	// history replaced, at their changes' ring index (nil for a change
	// that replaced nothing); grown up to the ring's capacity, cap.
	refs []resource.Resource
	cap  int
	// pending are the checks to run once the lock is released.
	pending []check

	// marks are the snapshots handed to holders or reported, until their
	// last check; nmarks counts them, so that a check skips marksMu when
	// there are none.
	marksMu sync.Mutex
	marks   map[resource.Resource]*mark
	nmarks  atomic.Int64
}

// mark is what the detector knows of a snapshot beyond its reference
// copy: whom it was handed to, and whether its change was reported (a
// change is reported once).
type mark struct {
	holders  []state.SnapshotHolder
	reported bool
}

func newDetector(report func(error), cap int, every uint64) *detector {
	return &detector{report: report, cur: map[resource.ID]*current{}, cap: cap, every: max(every, 1)}
}

// samples reports whether the detector keeps a reference copy of some
// versions only (the guard), whose stored values then say which (see
// slot.go); false when it is off (nil) or keeps one of every version.
func (d *detector) samples() bool { return d != nil && d.every > 1 }

// keepRefLocked keeps ref, the reference copy of the version replaced by
// the change entering the history at ring index i, until that change
// leaves the history.
func (d *detector) keepRefLocked(i int, ref resource.Resource) {
	if d == nil {
		return
	}
	if i >= len(d.refs) {
		if ref == nil {
			return // the slots past len(refs) are nil
		}
		n := min(max(2*len(d.refs), i+1, 64), d.cap)
		d.refs = append(d.refs, make([]resource.Resource, n-len(d.refs))...)
	}
	d.refs[i] = ref
}

// refLocked returns the reference copy of the version replaced by the
// change seq of ks, which must be in the history.
func (d *detector) refLocked(ks *kindStore, seq uint64) resource.Resource {
	if i := int((seq - 1) % uint64(ks.cap)); i < len(d.refs) {
		return d.refs[i]
	}
	return nil
}

// referenceCopy returns the reference copy of r, a resource about to be
// stored, or nil when the detector is off (d nil) or, for the guard, when
// this write is not one of its sample (the first of every d.every writes
// of the kind). It runs before the write takes the kind's lock.
func (d *detector) referenceCopy(r resource.Resource) (resource.Resource, error) {
	if d == nil || !d.sampled() {
		return nil, nil
	}
	return state.DeepCopyOf(r)
}

// sampled counts a write that asks for a reference copy and reports
// whether it is one of the sample: every write for the detector, the
// first of every d.every for the guard. The count is masked rather than
// divided when d.every is a power of two (the guard's default): a
// division would cost every write more than the rest of the check.
func (d *detector) sampled() bool {
	if d.every <= 1 {
		return true
	}
	n := d.writes.Add(1)
	if m := d.every - 1; d.every&m == 0 {
		return n&m == 1
	}
	return n%d.every == 1
}

// freeze freezes md, the metadata of a version about to be stored (see
// resource.Metadata.Freeze). A version the detector watches (watched: it
// kept a reference copy of it) first gets storage of its own for its
// owner, finalizers, labels and annotations (resource.Metadata.Unshare):
// a change made to them through the snapshot then changes the snapshot
// alone, not its reference copy, and shows. Other versions share them
// with the copies they were made from, at no cost.
func freeze(md *resource.Metadata, watched bool) {
	if watched {
		md.Unshare()
	}
	md.Freeze()
}

// stampLike gives the reference copy ref (nil when the detector is off)
// the metadata the state stamped on the snapshot: version, phase, owner
// and times; and freezes it as the snapshot is (nobody changes a
// reference copy: its owner, finalizers, labels and annotations are its
// own or shared with versions no longer written, see freeze).
func stampLike(ref resource.Resource, smd *resource.Metadata) {
	if ref != nil { // inlined: a write without a reference copy makes no call
		stampRef(ref, smd)
	}
}

// stampRef is stampLike of a reference copy.
func stampRef(ref resource.Resource, smd *resource.Metadata) {
	rmd := ref.Metadata()
	rmd.SetVersion(smd.Version())
	rmd.SetPhase(smd.Phase())
	rmd.ReplaceOwner(smd.Owner())
	rmd.SetCreated(smd.Created())
	rmd.SetUpdated(smd.Updated())
	rmd.Freeze()
}

// restoredLocked watches r, a resource restored from persistence, whose
// reference copy is ref.
func (d *detector) restoredLocked(id resource.ID, ref resource.Resource) {
	d.cur[id] = &current{ref: ref}
}

// detectChangeLocked records the change seq of id, before it enters the
// history: old is the current version (nil when absent), replaced by a
// version whose reference copy is ref (nil for a destroy). old is to be
// checked, with the version before it while the history keeps the change
// that replaced that one. It returns old's reference copy, which
// the writer keeps at the change's ring index (keepRefLocked; nil when the
// detector is off or id was absent).
//
// A destroy leaves its resource's entry in cur without a reference copy
// (a tombstone naming the destroy), so that the destroyed version, which
// the destroy's record holds, is found (refLocked) until the destroy
// leaves the history; verify then removes it.
//
// A version the guard did not sample (ref nil, new not nil) has no entry:
// the one it replaces, if sampled, is checked now and, while the history
// keeps it, when its change leaves the history.
func (ks *kindStore) detectChangeLocked(id resource.ID, seq uint64, old, new, ref resource.Resource) resource.Resource {
	d := ks.det
	if d == nil {
		return nil
	}
	c := d.cur[id]
	if c == nil || c.ref == nil { // absent, destroyed or not sampled
		switch {
		case ref == nil:
		case c == nil:
			d.cur[id] = &current{ref: ref, seq: seq}
		default:
			c.ref, c.seq = ref, seq
		}
		return nil
	}
	oldRef := c.ref
	d.pending = append(d.pending, check{snap: old, ref: oldRef})
	if c.seq >= ks.floor {
		d.pending = append(d.pending, check{rec: *ks.recordLocked(c.seq), ref: d.refLocked(ks, c.seq)})
	}
	if ref == nil && new != nil {
		delete(d.cur, id) // not sampled: nothing to keep
		return oldRef
	}
	c.ref, c.seq = ref, seq
	return oldRef
}

// leftLocked is called when rec, a record of the kind, leaves the history: the
// version it replaced is to be checked a last time (when the detector
// kept a reference copy of it: none for a create, nor for a version the
// guard did not sample).
//
// i is rec's ring index: the write that overwrites rec knows it, and
// computing it from rec's seq would cost every write a division.
func (d *detector) leftLocked(i int, rec *record) {
	if !d.holdsLocked(i) {
		return
	}
	d.pending = append(d.pending, check{rec: *rec, ref: d.refs[i]})
	d.refs[i] = nil // the check holds it now
}

// holdsLocked reports whether the detector keeps a reference copy for
// ring index i, to check against the record there when it leaves the
// ring. The caller holds the kind's mu.
func (d *detector) holdsLocked(i int) bool {
	return d != nil && i < len(d.refs) && d.refs[i] != nil
}

// hasPendingLocked reports whether takeLocked has checks to take. The
// caller holds the kind's mu.
func (d *detector) hasPendingLocked() bool { return len(d.pending) > 0 }

// takeLocked appends the checks to run to dst and forgets them.
func (d *detector) takeLocked(dst []check) []check {
	if d == nil || len(d.pending) == 0 {
		return dst
	}
	dst = append(dst, d.pending...)
	clear(d.pending)
	d.pending = d.pending[:0]
	return dst
}

// verify runs the checks: it compares each snapshot with its reference
// copy and reports the changed ones. It runs without the kind's lock (ks
// is the kind: a destroy leaving the history takes the lock to remove
// its tombstone).
func (d *detector) verify(ks *kindStore, checks []check) {
	for i := range checks {
		c := &checks[i]
		snap, ref, last := c.snap, c.ref, false
		if c.rec.seq != 0 {
			snap, last = c.rec.old, true
			if c.rec.new == nil {
				ks.bury(&c.rec)
			}
		}
		if snap == nil || ref == nil {
			continue
		}
		err := compareSnapshot(snap, ref)
		if err == nil {
			if last {
				d.forget(snap)
			}
			continue
		}
		if first, holders := d.found(snap, last); first {
			d.raise(err, holders)
		}
	}
}

// bury removes the tombstone of the destroy rec, which left the history,
// unless the resource was created again since. It takes the kind's lock.
func (ks *kindStore) bury(rec *record) {
	ks.mu.Lock()
	if c := ks.det.cur[rec.ID()]; c != nil && c.ref == nil && c.seq == rec.seq {
		delete(ks.det.cur, rec.ID())
	}
	ks.mu.Unlock()
}

// found marks snap's change reported and returns whether it was not yet,
// and the holders snap was handed to; last says that this was the
// snapshot's last check, after which it is forgotten.
func (d *detector) found(snap resource.Resource, last bool) (first bool, holders []state.SnapshotHolder) {
	d.marksMu.Lock()
	defer d.marksMu.Unlock()
	m := d.marks[snap]
	switch {
	case m != nil && last:
		delete(d.marks, snap)
		d.nmarks.Add(-1)
	case m == nil:
		m = &mark{}
		if !last {
			d.markLocked(snap, m)
		}
	}
	first = !m.reported
	m.reported = true
	return first, m.holders
}

// markLocked records m as snap's mark; the caller holds marksMu.
func (d *detector) markLocked(snap resource.Resource, m *mark) {
	if d.marks == nil {
		d.marks = map[resource.Resource]*mark{}
	}
	d.marks[snap] = m
	d.nmarks.Add(1)
}

// forget drops what the detector knows of snap, after its last check.
func (d *detector) forget(snap resource.Resource) {
	if d.nmarks.Load() == 0 {
		return
	}
	d.marksMu.Lock()
	if _, ok := d.marks[snap]; ok {
		delete(d.marks, snap)
		d.nmarks.Add(-1)
	}
	d.marksMu.Unlock()
}

// handedTo records that snap was handed to h.
func (d *detector) handedTo(snap resource.Resource, h state.SnapshotHolder) {
	d.marksMu.Lock()
	defer d.marksMu.Unlock()
	m := d.marks[snap]
	if m == nil {
		m = &mark{}
		d.markLocked(snap, m)
	}
	if !slices.Contains(m.holders, h) {
		m.holders = append(m.holders, h)
	}
}

// raise raises err, a change found by a check of the state's own: it names
// holders, the first of which that takes it on raises it in its
// goroutine; with none, the report runs here.
func (d *detector) raise(err error, holders []state.SnapshotHolder) {
	setHolders(err, holders)
	for _, h := range holders {
		if h.SnapshotChanged(err) {
			return
		}
	}
	d.report(err)
}

// setHolders names holders in err, a *MutationError.
func setHolders(err error, holders []state.SnapshotHolder) {
	if me, ok := err.(*MutationError); ok && len(holders) > 0 {
		me.Holders = make([]string, len(holders))
		for i, h := range holders {
			me.Holders[i] = h.HolderName()
		}
	}
}
