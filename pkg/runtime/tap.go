package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/state"
)

// ChangeTap sees the changes of the kinds the Runtime watches as its
// watches receive them ([Runtime.TapChanges]): a flight recorder (package
// recording) records them without a watch of its own, so that the state
// sends each change once, to the Runtime.
type ChangeTap interface {
	// Changes is called on the kind's watch goroutine with the live
	// changes of one batch the watch received, in the state's order. It
	// must return promptly (the kind's routing waits for it) and keep
	// neither the slice nor the events; it may keep their resources (the
	// state's shared snapshots), read-only.
	Changes(kind resource.KindKey, events []state.Event)
	// Lost is called when the kind's watch ended while the Runtime runs
	// (it failed, or re-lists): the changes until it is live again reach
	// the Runtime as a diff, which Changes does not see.
	Lost(kind resource.KindKey)
}

// KeepingChangeTap is a ChangeTap that may keep a batch's slice rather
// than copy it: the Runtime's watches call ChangesKept in place of
// Changes.
type KeepingChangeTap interface {
	ChangeTap
	// ChangesKept is Changes, on the same terms, but the tap may keep
	// events, the slice and its events (kept): the watch then uses
	// spare (empty; nil for a new one), which the tap never uses again,
	// for its next batches. The events' Bookmark and Error are the
	// state's: a tap that keeps them reads neither.
	ChangesKept(kind resource.KindKey, events []state.Event) (spare []state.Event, kept bool)
}

var _ route.KeepingTap = KeepingChangeTap(nil)

// StoppingChangeTap is a ChangeTap that is told when a kind's watch ended
// because the Runtime stops (its context is done): no change of the kind
// after those Changes was handed reaches the tap any more.
type StoppingChangeTap interface {
	ChangeTap
	// Stopped is called on the kind's watch goroutine as it ends, once
	// per watch of the kind.
	Stopped(kind resource.KindKey)
}

var _ route.StoppingTap = StoppingChangeTap(nil)

// CommitTap sees each write of a controller that committed, with what
// the controller's pass had read ([Runtime.TapCommits]): a flight
// recorder keeps it so that a replay lets each pass read the state it
// read when recorded (package runtimetest/sim, Scenario.MatchRecording).
type CommitTap interface {
	// Committed is called on the controller's goroutine once its write
	// returned: controller wrote ptr, now at version (for a destroy, the
	// version destroyed); read is the revision of the state that the
	// first read of its pass returned (a Controller's pass runs from one
	// call of EventCh to the next, a QController's is the run of one
	// item, each worker's its own), 0 when none said; pass numbers that
	// pass among the controller's passes and item runs (from 1, in the
	// order they started); item is the QController item whose run made
	// the write, zero for a Controller's pass (a replay takes the items in
	// the order that made the commits), nil for a Controller's pass. ptr
	// (often the metadata of the resource written) and item are read
	// during the call only: the tap keeps neither (resource.PointerOf
	// copies one). A write whose version the state does not tell is not
	// seen. It must return promptly.
	Committed(controller string, ptr resource.Pointer, version, read, pass uint64, item *resource.PointerKey)
}

// PassTap is a CommitTap that also sees the reads of every pass of the
// Runtime's controllers, those of passes that commit nothing included: a
// replay then holds each read until its run is at the state the read saw
// when recorded.
type PassTap interface {
	CommitTap
	// Read is called on the controller's goroutine once a read (a Get or
	// a List through its controller.Runtime) of its pass numbered pass
	// (as Committed numbers it) returned the state at revision rev: the
	// read numbered index in the pass (from 0; every Get and List counts,
	// one that failed or said no revision too). It is called for the
	// pass's first read that says its revision and for each later one
	// whose revision or kind differs from the previous such read's; kind
	// is what it read (of a Get, the resource's kind; the read saw the
	// kind's resources as they were at rev), item the QController item of
	// the run (nil for a Controller's pass; read during the call only). A
	// read that failed (but for not found) is counted, not told. It must
	// return promptly.
	Read(controller string, pass uint64, index uint32, rev uint64, kind resource.KindKey, item *resource.PointerKey)
}

// BatchTap is a PassTap that also sees, for each pass of a Controller
// that takes its changes from the Runtime's change log
// (changelog.Source, an incremental pass), what its batch held: a
// replay then wakes the pass where the changes it took had come, not
// where its reads saw the state (changes routed between the two are the
// next pass's).
type BatchTap interface {
	PassTap
	// Took is called on the controller's goroutine once the pass
	// numbered pass (as Committed numbers it) took a batch of changes
	// that is not full: the changes routed to it before, whose newest
	// revision is at most rev (the controller's read floor then). It
	// must return promptly.
	Took(controller string, pass uint64, rev uint64)
}

// TapCommits makes t see every commit of the Runtime's controllers
// (those registered now and later) from its return until remove; a
// PassTap also sees every pass's reads, a BatchTap every incremental
// pass's batch. While t is set, each read of a
// controller asks the cache or the state for the revision it reflects (a
// read that asks for it itself, with state.WithGetRevision or
// WithListRevision, says none). One commit tap at a time: a second is
// ErrTapped until the first is removed.
func (r *Runtime) TapCommits(t CommitTap) (remove func(), err error) {
	if t == nil {
		return nil, state.NewInvalidError(nil, "runtime: TapCommits of a nil CommitTap")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.commits != nil {
		return nil, ErrTapped
	}
	r.setCommitLogLocked(t)
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.setCommitLogLocked(nil)
		})
	}, nil
}

// addAdapter keeps a controller's adapter, which logs its commits to the
// CommitTap set, if any.
func (r *Runtime) addAdapter(ad *adapter.Adapter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adapters = append(r.adapters, ad)
	ad.SetCommitLog(r.commits)
}

// setCommitLogLocked makes every controller log its commits to l (nil:
// none); r.mu is held.
func (r *Runtime) setCommitLogLocked(l adapter.CommitLog) {
	r.commits = l
	for _, ad := range r.adapters {
		ad.SetCommitLog(l)
	}
}

// ListingTap is a ChangeTap that also sees each kind's first listing
// ([Runtime.AttachChanges]).
type ListingTap interface {
	ChangeTap
	// Listed is called once per kind, on its watch goroutine, before any
	// of its Changes: with the Created events of every resource of the
	// Runtime's first listing of the kind and the revision it was listed
	// at (0 from a state that does not number its changes). The same
	// terms as Changes apply.
	Listed(kind resource.KindKey, events []state.Event, rev uint64)
}

// ErrRunning is returned by AttachChanges once Run was called.
var ErrRunning = errors.New("runtime: Run was called already (attach before Run)")

// ErrTapped is returned by TapChanges when another tap is set.
var ErrTapped = route.ErrTapped

// AttachChanges makes t see the Runtime's first listing of each of kinds
// that the Runtime watches (Listed) and every live change after it
// (Changes), until remove. It must be called before Run (ErrRunning
// otherwise) and does not wait: from Run on, t sees every change of those
// kinds from the state the Runtime first listed, which is where a flight
// recorder attached before Run starts. It returns the kinds tapped,
// sorted; one tap at a time (ErrTapped).
func (r *Runtime) AttachChanges(t ListingTap, kinds []resource.KindKey) (tapped []resource.KindKey, remove func(), err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase != phaseIdle {
		return nil, nil, ErrRunning
	}
	tapped = r.watchedOf(kinds)
	remove, err = r.router.SetTap(t)
	if err != nil {
		return nil, nil, err
	}
	return tapped, remove, nil
}

// watchedOf returns those of kinds the Runtime watches, sorted.
func (r *Runtime) watchedOf(kinds []resource.KindKey) []resource.KindKey {
	watched := append(r.db.Snapshot().Keys(), r.caches.Keys()...)
	var tapped []resource.KindKey
	for _, k := range kinds {
		if slices.Contains(watched, k) {
			tapped = append(tapped, k)
		}
	}
	slices.SortFunc(tapped, resource.KindKey.Compare)
	return slices.Compact(tapped)
}

// TapChanges makes t see every live change of the kinds the Runtime
// watches (its controllers' inputs and its cached kinds), from now until
// remove. It waits until the watch of each of kinds that the Runtime
// watches has delivered its first bootstrap (so the Runtime must run;
// ctx bounds the wait): from its return, t sees every change of those
// kinds made after the state their bootstraps listed. It returns those
// kinds, sorted: t never sees the others. One tap at a time: a second
// is ErrTapped until the first is removed.
func (r *Runtime) TapChanges(ctx context.Context, t ChangeTap, kinds []resource.KindKey) (tapped []resource.KindKey, remove func(), err error) {
	tapped = r.watchedOf(kinds)
	remove, err = r.router.SetTap(t)
	if err != nil {
		return nil, nil, err
	}
	if !r.router.WaitBootstrapped(ctx, tapped) {
		remove()
		return nil, nil, ctx.Err()
	}
	return tapped, remove, nil
}
