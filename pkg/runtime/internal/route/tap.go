package route

import (
	"errors"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Tap sees the changes the kind watches route live, as the state sent
// them, so that a flight recorder (package recording) needs no watch of
// its own of the kinds the Runtime watches.
type Tap interface {
	// Changes is called on the kind's watch goroutine with the live
	// changes of one batch (after the kind's first bootstrap, and not
	// the diff of a re-list), in order. It must return promptly and keep
	// neither the slice nor the events; it may keep their resources (the
	// state's shared snapshots), read-only.
	Changes(key resource.KindKey, events []state.Event)
	// Lost is called when the kind's watch ended (failed, or re-lists on
	// request) while the Runtime runs: the changes until it is live again
	// are routed as a diff, which Changes does not see.
	Lost(key resource.KindKey)
}

// ListingTap is a Tap that also sees each kind's first listing: a tap set
// before the Runtime runs (Runtime.AttachChanges) sees, for each kind, the
// resources of the watch's first bootstrap and the revision it was listed
// at, before any of the kind's live changes.
type ListingTap interface {
	Tap
	// Listed is called on the kind's watch goroutine once, with the
	// Created events of the kind's first bootstrap (every resource
	// listed) and its revision (0 from a state that does not number its
	// changes). It must return promptly and keep neither the slice nor
	// the events; it may keep their resources, read-only.
	Listed(key resource.KindKey, events []state.Event, rev uint64)
}

// KeepingTap is a Tap that may keep a batch's slice rather than copy it:
// the watch then routes its next batches into a slice the tap is done
// with.
type KeepingTap interface {
	Tap
	// ChangesKept is called in place of Changes, on the same terms, but
	// the tap may keep events, the slice and its events (kept): the
	// watch then uses spare (empty; nil for a new one), which the tap
	// never uses again, for its next batches. The events' Bookmark and
	// Error are the state's: a tap that keeps them reads neither.
	ChangesKept(key resource.KindKey, events []state.Event) (spare []state.Event, kept bool)
}

// StoppingTap is a Tap that is told when a kind's watch ended because
// its context is done (the Runtime stops).
type StoppingTap interface {
	Tap
	Stopped(key resource.KindKey)
}

// ErrTapped is returned by Router.SetTap when a tap is set already.
var ErrTapped = errors.New("the Runtime's changes are tapped already")

// tapHolder holds the router's tap; every watcher reads it per batch.
type tapHolder struct{ t atomic.Pointer[Tap] }

func (h *tapHolder) load() Tap {
	if p := h.t.Load(); p != nil {
		return *p
	}
	return nil
}

// SetTap makes t see every kind watch's live changes from now on, until
// the returned remove; only one tap at a time (ErrTapped).
func (r *Router) SetTap(t Tap) (remove func(), err error) {
	p := &t
	if !r.tap.t.CompareAndSwap(nil, p) {
		return nil, ErrTapped
	}
	return func() { r.tap.t.CompareAndSwap(p, nil) }, nil
}

// tapChanges hands a batch's routed changes to the tap when they are
// live changes: not those of a re-list's diff (phase relisting before
// the batch). A KeepingTap that keeps them leaves w.out its spare.
func (w *kindWatcher) tapChanges(was phase) {
	t := w.tap.load()
	if t == nil || was == relisting || len(w.out) == 0 {
		return
	}
	k, ok := t.(KeepingTap)
	if !ok {
		t.Changes(w.key, w.out)
		return
	}
	if spare, kept := k.ChangesKept(w.key, w.out); kept {
		w.out = spare[:0]
	}
}

// tapListed hands the kind's first bootstrap to a ListingTap.
func (w *kindWatcher) tapListed() {
	if t, ok := w.tap.load().(ListingTap); ok {
		t.Listed(w.key, w.boot, w.rev)
	}
}

// tapStopped tells a StoppingTap the kind's watch ended with its context.
func (w *kindWatcher) tapStopped() {
	if t, ok := w.tap.load().(StoppingTap); ok {
		t.Stopped(w.key)
	}
}

// tapLost tells the tap the kind's watch ended.
func (w *kindWatcher) tapLost() {
	if t := w.tap.load(); t != nil {
		t.Lost(w.key)
	}
}
