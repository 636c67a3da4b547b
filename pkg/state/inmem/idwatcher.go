package inmem

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// idWatcher is a watch of one resource (Watch): a goroutine that delivers,
// through its feed, the changes of its resource that the writers push into
// its queue. It never holds the kind's lock while sending.
type idWatcher struct {
	feed

	id resource.ID
	// parked is set while the watcher's goroutine waits for wake.
	// Guarded by ks.mu.
	parked bool
	// queue holds the undelivered changes, oldest first; dirty (when
	// hasDirty) coalesces the changes that came before them once the queue
	// overflowed. Guarded by ks.mu.
	queue    []record
	dirty    spillEntry
	hasDirty bool

	// The fields below belong to the watcher's goroutine.

	current bool     // send S8's event (the current state) first
	spareQ  []record // recycled queue
}

// sendInitial delivers what the watch starts with: the current state (S8)
// or the replayed changes (S11).
func (w *idWatcher) sendInitial() bool {
	w.reserve(len(w.snap) + 1 + len(w.init))
	switch {
	case w.current && len(w.snap) > 0:
		if !w.emit(state.Created, w.snap[0], nil, w.snapSeq, w.snapRev, true) {
			return false
		}
	case w.current:
		if !w.emit(state.Destroyed, backend.PointerOnly(w.ks.pointer(w.id)), nil, w.snapSeq, w.snapRev, true) {
			return false
		}
	}
	return w.sendReplay()
}

// pushLocked queues a change for a single-resource watcher; when the queue
// is full, its changes are coalesced into dirty first (rule S12).
func (w *idWatcher) pushLocked(r *record) {
	if len(w.queue) >= min(idQueueLimit, w.ks.cap) {
		for i := range w.queue {
			w.dirty, w.hasDirty = foldEntry(w.dirty, w.hasDirty, &w.queue[i])
		}
		clear(w.queue)
		w.queue = w.queue[:0]
	}
	w.queue = append(w.queue, *r)
	if w.parked {
		w.parked = false
		w.signal()
	}
}

// runID is the goroutine of a single-resource watcher.
func (w *idWatcher) runID() {
	ks := w.ks
	defer func() {
		ks.mu.Lock()
		ks.removeIDWatcherLocked(w)
		ks.mu.Unlock()
	}()
	if !w.sendInitial() {
		return
	}
	for {
		ks.mu.Lock()
		if !w.hasDirty && len(w.queue) == 0 {
			w.parked = true
			ks.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-w.ctx.Done():
				return
			}
		}
		dirty, hasDirty := w.dirty, w.hasDirty
		w.dirty, w.hasDirty = spillEntry{}, false
		queue := w.queue
		w.queue, w.spareQ = w.spareQ, nil
		ks.mu.Unlock()

		if hasDirty {
			w.coal = append(w.coal[:0], coalesced{spillEntry: dirty, id: w.id})
			if !w.deliverCoalesced(w.coal) {
				return
			}
		}
		if !w.deliverRecords(queue) || !w.flush() {
			return
		}
		w.spareQ = queue[:0]
	}
}
