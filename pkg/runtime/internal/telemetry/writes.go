package telemetry

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// writeCounts counts a controller's commits by kind: a map read without a
// lock (the kinds a controller writes are few and learned early) and
// replaced, under mu, by a copy with a new kind.
type writeCounts struct {
	m  atomic.Pointer[map[resource.KindKey]*atomic.Uint64]
	mu sync.Mutex
}

// add counts one commit to a resource of kind k.
func (w *writeCounts) add(k resource.KindKey) {
	if m := w.m.Load(); m != nil {
		if n := (*m)[k]; n != nil {
			n.Add(1)
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var next map[resource.KindKey]*atomic.Uint64
	if m := w.m.Load(); m != nil {
		if n := (*m)[k]; n != nil {
			n.Add(1)
			return
		}
		next = maps.Clone(*m)
	} else {
		next = map[resource.KindKey]*atomic.Uint64{}
	}
	n := new(atomic.Uint64)
	n.Add(1)
	next[k] = n
	w.m.Store(&next)
}

// KindCount is a count of commits to resources of one kind.
type KindCount struct {
	Kind  resource.KindKey
	Count uint64
}

// Writes returns the controller's successful writes through the Runtime
// (creates, updates, modifies that changed something, teardowns, destroys,
// finalizer changes — a teardown or a finalizer change that had nothing to
// do counts too) by kind, sorted by kind; nil with metrics off or before
// its first write.
func (c *Controller) Writes() []KindCount {
	if c == nil || !c.eng.Metrics {
		return nil
	}
	m := c.writes.m.Load()
	if m == nil {
		return nil
	}
	out := make([]KindCount, 0, len(*m))
	for _, k := range slices.SortedFunc(maps.Keys(*m), resource.KindKey.Compare) {
		out = append(out, KindCount{Kind: k, Count: (*m)[k].Load()})
	}
	return out
}
