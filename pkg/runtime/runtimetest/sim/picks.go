package sim

import (
	"context"
	"fmt"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
)

// pickingHolds is the scheduler of a Runtime in the run that reproduces
// a recording (Scenario.MatchRecording): holds that also picks which due
// item each idle QController worker takes (sched.Picker), so that the
// items run as the recording has them rather than in the queue's order.
// Every other run's workers take their queue's first item, then wait at
// its gate (sched.GateItem).
type pickingHolds struct{ *holds }

var _ sched.Picker = pickingHolds{}

// pickWait is an idle QController worker waiting for its item.
type pickWait struct {
	p  sched.Pick
	ch chan pickedItem
}

type pickedItem struct {
	ptr     resource.PointerKey
	mapItem bool
}

// Pick implements sched.Picker: the worker waits until the schedule picks
// one of the items p.Due lists (pickCandidates).
func (h pickingHolds) Pick(ctx context.Context, p sched.Pick) (resource.PointerKey, bool, bool) {
	w := &pickWait{p: p, ch: make(chan pickedItem, 1)}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return resource.PointerKey{}, false, false
	}
	h.picks = append(h.picks, w)
	h.mu.Unlock()
	h.r.ping()
	select {
	case it := <-w.ch:
		return it.ptr, it.mapItem, true
	case <-ctx.Done():
		h.mu.Lock()
		h.picks = slices.DeleteFunc(h.picks, func(x *pickWait) bool { return x == w })
		h.mu.Unlock()
		return resource.PointerKey{}, false, false
	}
}

// pickCandidates appends, for each QController with an idle worker, each
// item its queue has due: picking one hands it to the controller's
// first idle worker. Called on the loop, while the Runtime's goroutines
// wait.
func (h *holds) pickCandidates(out []candidate) []candidate {
	h.mu.Lock()
	var first []*pickWait // each controller's first idle worker
	for _, w := range h.picks {
		if !slices.ContainsFunc(first, func(x *pickWait) bool { return x.p.Controller == w.p.Controller }) {
			first = append(first, w)
		}
	}
	h.mu.Unlock()
	for _, w := range first {
		w.p.Due(func(ptr resource.PointerKey, mapItem bool) bool {
			what := "Reconcile"
			if mapItem {
				what = "MapInput"
			}
			it := pickedItem{ptr: ptr, mapItem: mapItem}
			out = append(out, candidate{
				cat: catEngine, key: fmt.Sprintf("2 %s %s %s", w.p.Controller, ptr, what),
				text: fmt.Sprintf("%s %s of %s", what, ptr, w.p.Controller), actor: w.p.Controller,
				pass: true, item: ptr, mapping: mapItem, do: func() { h.pick(w, it) },
			})
			return true
		})
	}
	return out
}

// pick hands the worker waiting at w its item.
func (h *holds) pick(w *pickWait, it pickedItem) {
	if unlist(h, &h.picks, w) {
		w.ch <- it
	}
}
