package state

import "github.com/resgraph/resgraph/pkg/resource"

// SnapshotHolder is a reader that a state's shared snapshots (rule S7) are
// handed to, as a [SnapshotTracker] knows it: the Runtime's holders are its
// controllers. A state that watches its snapshots for changes names a
// snapshot's holders when it reports a change of it, and gives the report
// to a holder to raise rather than raising it in the goroutine of whoever
// wrote the resource next.
type SnapshotHolder interface {
	// HolderName names the holder in reports (a controller's name).
	HolderName() string
	// SnapshotChanged is given the report of a change, found by the
	// state when it checked on its own (a write of the resource, in the
	// writer's goroutine), of a snapshot handed to the holder. It returns
	// whether the holder takes the report on, to raise it in its own
	// goroutine (see [SnapshotTracker.ReportChange]); a holder that no
	// longer runs returns false, and the state raises the report itself.
	// It must not block.
	SnapshotChanged(err error) bool
}

// SnapshotTracker is an optional interface of a [CoreState] that watches
// the shared snapshots it hands out for changes (rule S7: the inmem
// state's mutation detector). A reader that hands snapshots on — the
// Runtime, to its controllers — tells it whom it handed which, and asks it
// to check them when the holder is done with them, so that a change is
// reported naming the holders and raised in a holder's goroutine. A state
// returned by [WrapCore] implements it by asking its core; over a core
// that does not implement it, it tracks nothing.
type SnapshotTracker interface {
	// TracksSnapshots reports whether the state watches its snapshots
	// for changes; when it does not, the other methods do nothing.
	TracksSnapshots() bool
	// HandedTo records that rs, shared snapshots of this state (from its
	// watch events or its read-only reads), were handed to h: a change of
	// one of them found later names h, and is given to h to raise
	// ([SnapshotHolder.SnapshotChanged]). Resources that are not
	// snapshots the state still watches are ignored.
	HandedTo(h SnapshotHolder, rs ...resource.Resource)
	// CheckHanded compares rs, snapshots handed to h, with what the
	// state stored, now, and returns the changes found, each naming the
	// snapshot's holders, for h to raise ([SnapshotTracker.ReportChange]).
	// A change is reported once, whoever finds it.
	CheckHanded(h SnapshotHolder, rs ...resource.Resource) []error
	// ReportChange raises err, a change a holder found (CheckHanded) or
	// was given (SnapshotChanged), as the state raises the changes it
	// finds itself: the inmem state calls its detector's report, which
	// panics by default in test binaries. Holders call it in their own
	// goroutine.
	ReportChange(err error)
}

// TracksSnapshots implements [SnapshotTracker] for a wrapped core.
func (w *coreWrapper) TracksSnapshots() bool {
	t, ok := w.CoreState.(SnapshotTracker)
	return ok && t.TracksSnapshots()
}

// HandedTo implements [SnapshotTracker] for a wrapped core.
func (w *coreWrapper) HandedTo(h SnapshotHolder, rs ...resource.Resource) {
	if t, ok := w.CoreState.(SnapshotTracker); ok {
		t.HandedTo(h, rs...)
	}
}

// CheckHanded implements [SnapshotTracker] for a wrapped core.
func (w *coreWrapper) CheckHanded(h SnapshotHolder, rs ...resource.Resource) []error {
	if t, ok := w.CoreState.(SnapshotTracker); ok {
		return t.CheckHanded(h, rs...)
	}
	return nil
}

// ReportChange implements [SnapshotTracker] for a wrapped core.
func (w *coreWrapper) ReportChange(err error) {
	if t, ok := w.CoreState.(SnapshotTracker); ok {
		t.ReportChange(err)
	}
}

// MutationNotifier is an optional interface of a [CoreState] that checks
// a sample of its shared snapshots for changes (rule S7) without tracking
// whom it hands them to: the inmem state's production guard. A reader that
// hands the snapshots on (the Runtime, to its controllers) subscribes to
// what it finds, to report each change naming the holders it knows of.
// A state returned by [WrapCore] implements it by asking its core; over a
// core that does not implement it, nothing is ever notified.
type MutationNotifier interface {
	// NotifyMutations calls fn, in the goroutine of the check that found
	// it, with every change found of the version of snapshot — a report
	// naming the resource, the changed part and its values — until stop
	// is called. fn must not block.
	NotifyMutations(fn func(snapshot resource.Pointer, version resource.Version, err error)) (stop func())
}

// NotifyMutations implements [MutationNotifier] for a wrapped core.
func (w *coreWrapper) NotifyMutations(fn func(snapshot resource.Pointer, version resource.Version, err error)) (stop func()) {
	if n, ok := w.CoreState.(MutationNotifier); ok {
		return n.NotifyMutations(fn)
	}
	return func() {}
}
