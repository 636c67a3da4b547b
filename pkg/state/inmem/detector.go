package inmem

import (
	"fmt"
	"os"
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
//     replaced and the one before it (the two an event of the latest
//     change carries);
//   - when a change leaves the history: the version it replaced, which no
//     kept change refers to any more, a last time.
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

// guard is a snapshot under watch and its reference copy.
type guard struct {
	snap, ref resource.Resource
	// seq is the change that made this version.
	seq uint64
	// reported is set once a change of the snapshot was reported: a
	// change is reported once.
	reported atomic.Bool
}

// detector is the per-kind state of the mutation detector. Its maps are
// guarded by the kind store's mu; comparisons run outside it.
type detector struct {
	report func(error)
	// cur is the guard of the current version of every resource.
	cur map[resource.ID]*guard
	// retired are the guards of replaced versions, keyed by the seq of the
	// change that replaced them (whose record's old they are).
	retired map[uint64]*guard
	// pending are the guards to check once the lock is released.
	pending []*guard
}

func newDetector(report func(error)) *detector {
	return &detector{report: report, cur: map[resource.ID]*guard{}, retired: map[uint64]*guard{}}
}

// referenceCopy returns the reference copy of a resource about to be
// stored, or nil when the detector is off (d nil).
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

// changedLocked records the change seq of id: the current version (nil
// when destroyed) and its reference copy replace the previous one, which
// is to be checked, along with the version before it.
func (d *detector) changedLocked(id resource.ID, seq uint64, now, ref resource.Resource) {
	if d == nil {
		return
	}
	if prev, ok := d.cur[id]; ok {
		d.retired[seq] = prev
		d.pending = append(d.pending, prev)
		if before, ok := d.retired[prev.seq]; ok {
			d.pending = append(d.pending, before)
		}
	}
	if now == nil {
		delete(d.cur, id)
	} else {
		d.cur[id] = &guard{snap: now, ref: ref, seq: seq}
	}
}

// leftLocked is called when the change seq leaves the history: the
// version it replaced is to be checked one last time.
func (d *detector) leftLocked(seq uint64) {
	if d == nil {
		return
	}
	if g, ok := d.retired[seq]; ok {
		delete(d.retired, seq)
		d.pending = append(d.pending, g)
	}
}

// takeLocked returns the guards to check and forgets them.
func (d *detector) takeLocked() []*guard {
	if d == nil {
		return nil
	}
	check := d.pending
	d.pending = nil
	return check
}

// verify compares each snapshot with its reference copy and reports the
// changed ones. It runs without the kind's lock.
func (d *detector) verify(check []*guard) {
	for _, g := range check {
		if g.reported.Load() {
			continue
		}
		if err := compareSnapshot(g.snap, g.ref); err != nil && !g.reported.Swap(true) {
			d.report(err)
		}
	}
}
