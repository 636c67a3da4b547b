package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/state"
)

// holds is the scheduler of one Runtime (sched.Scheduler): what the
// Runtime hands over waits here until the run's scheduler picks it. A
// change routed to a Controller wakes it at once (a Controller reads the
// state, not the change: its pass is what waits, at its gate); a change
// routed to a QController waits, each on its own, so that the schedule
// orders the queue's adds — in the order of its stream (one subscription's
// changes of one kind come in commit order), streams interleaved.
type holds struct {
	r   *run
	inc *incarnation

	mu sync.Mutex
	// The fields below are protected by mu.
	// streams are the held deliveries of each stream, in order.
	streams map[any][]sched.Delivery
	gates   []*gateWait
	// picks are the idle QController workers waiting for their item
	// (pickingHolds only).
	picks []*pickWait
	// caches are the held changes of each cached kind, in order.
	caches  map[resource.KindKey][]sched.CacheChange
	stopped bool

	// applyMu serializes the application of cache changes.
	applyMu sync.Mutex
}

type gateWait struct {
	g  sched.Gate
	ch chan struct{}
}

var _ sched.Scheduler = (*holds)(nil)

func newHolds(r *run, inc *incarnation) *holds {
	return &holds{r: r, inc: inc, streams: map[any][]sched.Delivery{}, caches: map[resource.KindKey][]sched.CacheChange{}}
}

// Route implements sched.Scheduler: it takes the batch, change by change.
func (h *holds) Route(b sched.Batch, events []state.Event, metas []*resource.Metadata, bootstrap bool) bool {
	b.HandOver(events, metas, bootstrap, h.deliver)
	return true
}

// Cache implements sched.Scheduler: it takes the batch, change by change.
func (h *holds) Cache(b sched.CacheBatch) bool {
	b.HandOver(h.cache)
	return true
}

// deliver holds a QController's change until the schedule releases it; a
// Controller's wake-up goes at once (a Controller reads the state, not
// the change: what the schedule orders is its pass).
func (h *holds) deliver(d sched.Delivery) {
	if !d.QController {
		d.Release()
		return
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	q := h.streams[d.Stream]
	if d.Silent && len(q) == 0 {
		h.mu.Unlock()
		d.Release() // nothing of its stream waits: its turn is now
		return
	}
	h.streams[d.Stream] = append(q, d)
	h.mu.Unlock()
	h.r.ping()
}

// Gate implements sched.Scheduler. A write waits only in the run that
// reproduces a recording (each commit a step of its own, taken in the
// recording's order); elsewhere it goes at once, within its pass's step.
func (h *holds) Gate(ctx context.Context, g sched.Gate) bool {
	if g.Kind == sched.GateWrite && !h.r.matching() {
		return true
	}
	w := &gateWait{g: g, ch: make(chan struct{})}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return false
	}
	h.gates = append(h.gates, w)
	h.mu.Unlock()
	h.r.ping()
	select {
	case <-w.ch:
		return true
	case <-ctx.Done():
		h.mu.Lock()
		h.gates = slices.DeleteFunc(h.gates, func(x *gateWait) bool { return x == w })
		h.mu.Unlock()
		return false
	}
}

// cache takes one change of a cached kind: with Faults.StaleCache a live
// change waits for the schedule; anything else is applied at once, after
// the kind's held changes.
func (h *holds) cache(c sched.CacheChange) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	if c.Live && h.r.sc.Faults.StaleCache && !h.r.matching() {
		h.caches[c.Kind] = append(h.caches[c.Kind], c)
		h.mu.Unlock()
		h.r.ping()
		return
	}
	held := h.caches[c.Kind]
	delete(h.caches, c.Kind)
	h.mu.Unlock()
	for _, x := range held {
		x.Apply()
	}
	c.Apply()
}

// flushCache applies every held change of kind k.
func (h *holds) flushCache(k resource.KindKey) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	h.mu.Lock()
	held := h.caches[k]
	delete(h.caches, k)
	h.mu.Unlock()
	for _, x := range held {
		x.Apply()
	}
}

// stop drops everything held: the Runtime is being killed. The gated
// goroutines leave their gates as the Runtime's context is canceled.
func (h *holds) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	h.streams = nil
	h.caches = nil
}

// candidates appends what is held now, as the Runtime's candidates of the
// step.
func (h *holds) candidates(out []candidate) []candidate {
	h.mu.Lock()
	defer h.mu.Unlock()
	for stream, q := range h.streams {
		if len(q) == 0 {
			continue
		}
		d := q[0]
		ptr := resource.PointerString(d.Resource)
		out = append(out, candidate{
			cat:  catEngine,
			key:  fmt.Sprintf("1 %020d %s %02d %s %d", d.Revision, d.Controller, int(d.Input), ptr, int(d.Type)),
			text: fmt.Sprintf("deliver %s %s v%s to %s (%v)", d.Type, ptr, d.Resource.Version(), d.Controller, d.Input),
			do:   func() { h.release(stream) },
		})
	}
	for _, w := range h.gates {
		var key, text string
		switch w.g.Kind {
		case sched.GateStart:
			key, text = "0 start "+w.g.Controller, "start "+w.g.Controller
		case sched.GatePass:
			key, text = "3 pass "+w.g.Controller, "pass "+w.g.Controller
		case sched.GateHook:
			key, text = "0 hook "+w.g.Controller, "RunHook of "+w.g.Controller
		case sched.GateWrite:
			out = append(out, candidate{
				cat: catEngine, key: fmt.Sprintf("3 write %s %s", w.g.Controller, w.g.Item),
				text: fmt.Sprintf("write %s by %s", w.g.Item, w.g.Controller), actor: w.g.Controller,
				write: true, target: w.g.Item, item: w.g.Source, do: func() { h.open(w) },
			})
			continue
		default:
			what := "Reconcile"
			if w.g.Map {
				what = "MapInput"
			}
			key = fmt.Sprintf("2 %s %s %s", w.g.Controller, w.g.Item, what)
			text = fmt.Sprintf("%s %s of %s", what, w.g.Item, w.g.Controller)
		}
		pass := w.g.Kind == sched.GatePass || w.g.Kind == sched.GateItem
		c := candidate{cat: catEngine, key: key, text: text, pass: pass, do: func() { h.open(w) }}
		if w.g.Kind == sched.GateItem {
			c.item, c.mapping = w.g.Item, w.g.Map
		}
		out = append(out, c)
	}
	for k, held := range h.caches {
		if len(held) == 0 {
			continue
		}
		out = append(out, candidate{
			cat:  catEngine,
			key:  fmt.Sprintf("4 cache %s", k),
			text: fmt.Sprintf("cache of %s takes in revision %d", k, held[0].Revision),
			do:   func() { h.applyHead(k) },
		})
	}
	return out
}

// release delivers the oldest held change of stream, and the silent
// ones after it.
func (h *holds) release(stream any) {
	h.mu.Lock()
	q := h.streams[stream]
	if len(q) == 0 || h.stopped {
		h.mu.Unlock()
		return
	}
	n := 1
	for n < len(q) && q[n].Silent {
		n++
	}
	take := slices.Clone(q[:n])
	if n == len(q) {
		delete(h.streams, stream)
	} else {
		h.streams[stream] = q[n:]
	}
	h.mu.Unlock()
	for _, d := range take {
		d.Release()
	}
}

// open lets the goroutine waiting at w go.
func (h *holds) open(w *gateWait) {
	if unlist(h, &h.gates, w) {
		close(w.ch)
	}
}

// unlist takes w out of the waiters *list (a field of h), under h.mu, and
// reports whether it was there: whoever takes it out lets it go.
func unlist[W comparable](h *holds, list *[]W, w W) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := slices.Index(*list, w)
	if i >= 0 {
		*list = slices.Delete(*list, i, i+1)
	}
	return i >= 0
}

// applyHead applies the oldest held change of kind k.
func (h *holds) applyHead(k resource.KindKey) {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	h.mu.Lock()
	held := h.caches[k]
	if len(held) == 0 || h.stopped {
		h.mu.Unlock()
		return
	}
	c := held[0]
	h.caches[k] = held[1:]
	h.mu.Unlock()
	c.Apply()
}
