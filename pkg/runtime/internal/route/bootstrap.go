package route

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// routeFirstBootstrap remembers the contents of the kind's first bootstrap
// and routes them at once, with bootMu held: existing resources are not
// changes for Controllers, which start (or are woken by UpdateInputs) once
// it is done; QControllers queue them (rules Q1, Q4). Then the kind is
// live.
func (w *kindWatcher) routeFirstBootstrap() {
	w.mem.ApplyBatch(w.boot, w.bootMetas, w.rev, true)
	w.mem.MarkReady()
	w.tapListed()

	w.bootMu.Lock()
	w.route(w.boot, w.bootMetas, true)
	w.bootRouted = true
	w.bootMu.Unlock()

	// Release the storage of a large bootstrap.
	clear(w.boot)
	clear(w.bootMetas)
	w.boot, w.bootMetas = nil, nil
	w.scratch.release()
	close(w.bootstrapped)
	w.bootstrappedOnce = true
}

// dropBootstrap drops a first bootstrap cut short (the watch failed before
// it was complete): the next watch starts it over.
func (w *kindWatcher) dropBootstrap() {
	clear(w.boot)
	clear(w.bootMetas)
	w.boot, w.bootMetas = w.boot[:0], w.bootMetas[:0]
}

// relisted handles a change of a re-list's bootstrap (or a change that
// follows it before it is complete): a resource whose generation and
// version match what was routed before did not change while the watch was
// down and is not routed again.
func (w *kindWatcher) relisted(ev *state.Event, md *resource.Metadata) {
	if ev.Type != state.Destroyed {
		_, _, id := md.Identity()
		w.present[id] = struct{}{}
		if w.mem.Unchanged(id, md) {
			return
		}
		if last, ok := w.mem.Last(id); ok && ev.Old == nil {
			// Changed while the watch was down: the version last routed
			// is its previous one (rule Q4, extended).
			e := *ev
			e.Old = last
			w.emit(&e, md)
			return
		}
	}
	w.emit(ev, md)
}

// endRelist ends a re-list's bootstrap: the resources routed before and
// absent from it disappeared while the watch was down, and are routed as
// destroyed, each with the version last routed (rule Q4).
func (w *kindWatcher) endRelist() {
	w.relistedFull()
	w.gone = w.mem.AppendRemembered(w.gone[:0])
	for _, r := range w.gone {
		if _, _, id := r.MD.Identity(); !w.isPresent(id) {
			w.emit(&state.Event{Type: state.Destroyed, Resource: r.Res, Old: r.Res}, r.MD)
		}
	}
	clear(w.gone)
	w.present = nil
}

// isPresent reports whether the running re-list's bootstrap reported id.
func (w *kindWatcher) isPresent(id resource.ID) bool {
	_, ok := w.present[id]
	return ok
}

// relistedFull makes the next pass of every Controller subscribed to the
// kind a full one (its change log's batch full): a re-list routes what
// differs from what was routed before, and a Controller that reads every
// input after it does not depend on that memory being exact.
func (w *kindWatcher) relistedFull() {
	subs := w.subs(w.key)
	for i := range subs {
		if l := subs[i].Handle.Changes; l != nil {
			l.MarkFull()
		}
	}
}
