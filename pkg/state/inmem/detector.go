package inmem

import (
	"fmt"
	"os"
	"sync"
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
// by the record of the change that replaced it (record.oldRef), beside
// the version itself (record.old). A write thus finds what to check with
// one lookup under the lock, and reads the versions after releasing it.
//
// A snapshot changed after its last check (it left the history, or the
// state was dropped: there is no finalizer to run a check then) is not
// reported.

// mutationEnv is the environment variable that overrides the default.
const mutationEnv = "RESGRAPH_MUTATION_DETECTOR"

// detectorDefault reports whether the detector is on by default: in test
// binaries, unless RESGRAPH_MUTATION_DETECTOR says otherwise.
func detectorDefault() bool {
	switch os.Getenv(mutationEnv) {
	case "0":
		return false
	case "1":
		return true
	}
	return testing.Testing()
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
}

// Error implements error.
func (e *MutationError) Error() string {
	return fmt.Sprintf("inmem: mutation detector: %s@%s, a shared read-only snapshot (watch event or read-only Get/List), was changed in place: %s was %s, is %s; change a copy instead (DeepCopy, or Modify)",
		resource.PointerString(e.Resource), e.Version, e.Path, e.Was, e.Now)
}

// current is the detector's view of a current version: its reference
// copy and the change that made it (seq; 0 when restored from
// persistence).
type current struct {
	ref resource.Resource
	seq uint64
}

// check is a comparison to run once the kind's lock is released: snap
// with ref, or the version that the change rec replaced (rec.old) with
// its reference copy (rec.oldRef).
type check struct {
	snap, ref resource.Resource
	rec       *record
}

// detector is the per-kind state of the mutation detector. Its fields but
// reported are guarded by the kind store's mu; comparisons run outside
// it.
type detector struct {
	report func(error)
	// cur is the current version of every resource, updated in place by
	// a write (one lookup, no assignment).
	cur map[resource.ID]*current
	// pending are the checks to run once the lock is released.
	pending []check

	// reportedMu guards reported: the snapshots whose change was
	// reported (a change is reported once), until their last check.
	reportedMu sync.Mutex
	reported   map[resource.Resource]struct{}
}

func newDetector(report func(error)) *detector {
	return &detector{report: report, cur: map[resource.ID]*current{}}
}

// referenceCopy returns the reference copy of r, a resource about to be
// stored, or nil when the detector is off (d nil). It runs before the
// write takes the kind's lock.
func (d *detector) referenceCopy(r resource.Resource) (resource.Resource, error) {
	if d == nil {
		return nil, nil
	}
	return state.DeepCopyOf(r)
}

// stampLike gives the reference copy ref (nil when the detector is off)
// the metadata the state stamped on the snapshot: version, phase, owner
// and times.
func stampLike(ref resource.Resource, smd *resource.Metadata) {
	if ref == nil {
		return
	}
	rmd := ref.Metadata()
	rmd.SetVersion(smd.Version())
	rmd.SetPhase(smd.Phase())
	_ = rmd.SetOwner("") // clearing never fails, nor does setting after it
	_ = rmd.SetOwner(smd.Owner())
	rmd.SetCreated(smd.Created())
	rmd.SetUpdated(smd.Updated())
}

// restoredLocked watches r, a resource restored from persistence, whose
// reference copy is ref.
func (d *detector) restoredLocked(id resource.ID, ref resource.Resource) {
	d.cur[id] = &current{ref: ref}
}

// changedLocked records the change seq of id, before it enters the
// history: old is the current version (nil when absent), replaced by a
// version whose reference copy is ref (nil for a destroy). old is to be
// checked, with the version before it while the history keeps the change
// that replaced that one. It returns old's reference copy, for the
// change's record (nil when the detector is off or id was absent).
func (ks *kindStore) detectChangeLocked(id resource.ID, seq uint64, old, ref resource.Resource) resource.Resource {
	d := ks.det
	if d == nil {
		return nil
	}
	c := d.cur[id]
	if c == nil {
		if ref != nil {
			d.cur[id] = &current{ref: ref, seq: seq}
		}
		return nil
	}
	oldRef := c.ref
	d.pending = append(d.pending, check{snap: old, ref: oldRef})
	if c.seq >= ks.floor {
		d.pending = append(d.pending, check{rec: ks.recordLocked(c.seq)})
	}
	if ref == nil {
		delete(d.cur, id)
	} else {
		c.ref, c.seq = ref, seq
	}
	return oldRef
}

// leftLocked is called when rec leaves the history: the version it
// replaced is to be checked a last time.
func (d *detector) leftLocked(rec *record) {
	if d != nil {
		d.pending = append(d.pending, check{rec: rec})
	}
}

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
// copy and reports the changed ones. It runs without the kind's lock.
func (d *detector) verify(checks []check) {
	for _, c := range checks {
		snap, ref, last := c.snap, c.ref, false
		if c.rec != nil {
			snap, ref, last = c.rec.old, c.rec.oldRef, true
		}
		if snap == nil || ref == nil {
			continue
		}
		if err := compareSnapshot(snap, ref); err != nil && d.firstReport(snap, last) {
			d.report(err)
		}
	}
}

// firstReport reports whether a change of snap was not reported yet, and
// remembers that it is; last says that this was the snapshot's last
// check, after which it is forgotten.
func (d *detector) firstReport(snap resource.Resource, last bool) bool {
	d.reportedMu.Lock()
	defer d.reportedMu.Unlock()
	_, done := d.reported[snap]
	switch {
	case last:
		delete(d.reported, snap)
	case !done:
		if d.reported == nil {
			d.reported = map[resource.Resource]struct{}{}
		}
		d.reported[snap] = struct{}{}
	}
	return !done
}
