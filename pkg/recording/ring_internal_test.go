package recording

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRC13_AControllerLogsWithoutWaitingForAnother: a controller's reads
// and commits are logged under its own log's lock only (rules RC9 and
// RC13: a controller's goroutine never waits for another's to log, nor
// for the pass log's lock, which only a controller's or a kind's first
// entry takes to number it).
func TestRC13_AControllerLogsWithoutWaitingForAnother(t *testing.T) {
	l := newPassLog()
	kind := resource.KindOf(resource.NewKind("ns", "Notes.test"))
	ptr := resource.PointerOf(resource.NewPointer("ns", "Notes.test", "x"))
	l.Read("b", 1, 0, 10, kind, nil) // numbers "b" and the kind
	l.Read("c", 1, 0, 10, kind, nil) // numbers "c"
	b := l.ctrlOf("b")
	l.mu.Lock()
	b.mu.Lock() // b logs (or a take copies b's log) meanwhile
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			l.Read("c", uint64(i+2), 0, uint64(11+i), kind, nil)
			l.Committed("c", ptr, uint64(i+1), uint64(11+i), uint64(i+2), nil)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadline for a failure, not a measure
		t.Error("c's logging waited for b's lock or the pass log's")
	}
	b.mu.Unlock()
	l.mu.Unlock()
	<-done
	assert.Len(t, l.passes(0, []Kind{{Namespace: "ns", Type: "Notes.test"}}, nil), 102)
}

// TestRC9_ABusyControllerLeavesAnothersCommits: each controller's log
// holds its own newest commits (rule RC9): a controller that commits a
// whole log's worth after another's commit does not push it out.
func TestRC9_ABusyControllerLeavesAnothersCommits(t *testing.T) {
	l := newPassLog()
	ptr := func(id string) resource.PointerKey {
		return resource.PointerOf(resource.NewPointer("ns", "Notes.test", id))
	}
	l.Committed("quiet", ptr("q"), 3, 7, 1, nil)
	for i := range passLogSize + 1 {
		l.Committed("busy", ptr(fmt.Sprint(i)), 1, uint64(10+i), uint64(i+1), nil)
	}
	r := l.readsNow()
	read, _ := r.of(ptr("q"), 3, 100)
	assert.Equal(t, uint64(7), read, "the quiet controller's commit")
	read, _ = r.of(ptr("0"), 1, 1<<20)
	assert.Zero(t, read, "the busy controller's oldest commit left its log")
	read, _ = r.of(ptr("1"), 1, 1<<20)
	assert.Equal(t, uint64(11), read, "the busy controller's newest commits")
}

// TestRC13_EntriesWrittenAtOnceAreReadWhole: controllers logging at once,
// and takes reading meanwhile, see every entry whole: each read a take
// returns is one some goroutine wrote, none made of two (run it with
// -race).
func TestRC13_EntriesWrittenAtOnceAreReadWhole(t *testing.T) {
	l := newPassLog()
	l.readMax = 64 // laps often
	kind := resource.KindOf(resource.NewKind("ns", "Notes.test"))
	kinds := []Kind{{Namespace: "ns", Type: "Notes.test"}}
	names := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	for _, name := range names {
		for range 2 { // two goroutines of one controller (a QController's workers)
			wg.Go(func() {
				for pass := uint64(1); pass <= 500; pass++ {
					for i := range uint32(3) {
						l.Read(name, pass, i, pass*1000+uint64(i), kind, nil)
					}
				}
			})
		}
	}
	check := func() {
		for _, p := range l.passes(0, kinds, nil) {
			for _, r := range p.Reads {
				require.Equal(t, uint64(r.Index), r.Revision%1000, "a torn read: %+v of %s", r, p.Controller)
				require.Equal(t, kind, r.Kind)
			}
		}
	}
	for range 50 {
		check()
	}
	wg.Wait()
	check()
}

// TestRC13_ARingHoldsItsNewestEntriesInOrder: a controller's ring
// allocates its chunks as it fills, up to its size, then each entry
// replaces the oldest; a copy gives its entries oldest first, each with
// its own item (an item's run's entry and a Controller's pass's, without,
// in one ring).
func TestRC13_ARingHoldsItsNewestEntriesInOrder(t *testing.T) {
	const size = 4 * ringChunk
	r := newEntryRing(size, nil)
	item := func(v uint64) resource.PointerKey {
		if v%3 != 0 || v < ringChunk {
			return resource.PointerKey{} // the first chunk has none until the ring laps
		}
		return resource.PointerOf(resource.NewPointer("ns", "Items.test", fmt.Sprint(v)))
	}
	check := func(from, to uint64) {
		t.Helper()
		c := r.copyOf()
		require.Equal(t, int(to-from), c.len())
		for i := range c.len() {
			w, it := c.at(i)
			v := from + uint64(i)
			require.Equal(t, [entryWords]uint64{v, v + 1, v + 2}, w)
			require.Equal(t, item(v), it, "entry %d's item", v)
		}
	}
	check(0, 0)
	for v := range uint64(2*size + 7) {
		it := item(v)
		r.put(v, v+1, v+2, &it)
		switch v {
		case 0, ringChunk - 1, ringChunk, size - 1:
			check(0, v+1)
			assert.Len(t, r.chunks, int(v/ringChunk)+1, "a chunk allocated as the ring reaches it")
		case size, size + ringChunk + 3:
			check(v+1-size, v+1)
		}
	}
	assert.Len(t, r.chunks, size/ringChunk, "its size, no more")
	check(size+7, 2*size+7)
}

// TestRC9_ThePassLogsChunksAreBoundedForEveryController: the rings of
// every controller take their chunks from one budget (passLogBytes): a
// ring that finds it spent stays at its size (its first chunk is always
// taken) and keeps its newest entries, in order.
func TestRC9_ThePassLogsChunksAreBoundedForEveryController(t *testing.T) {
	l := newPassLog()
	l.chunks.Store(2)
	ptr := func(id string) resource.PointerKey {
		return resource.PointerOf(resource.NewPointer("ns", "Notes.test", id))
	}
	const n = 2*ringChunk + 5
	for _, name := range []string{"a", "b", "c"} {
		for i := range n {
			l.Committed(name, ptr(fmt.Sprint(name, i)), 1, uint64(10+i), uint64(i+1), nil)
		}
	}
	held := map[string]int{}
	for _, c := range l.ctrlsNow() {
		commits, _ := c.copies()
		held[c.name] = commits.len()
		for i := range commits.len() {
			w, _ := commits.at(i)
			require.Equal(t, uint64(n-commits.len()+i+1), passEntryOf(w).pass, "%s's entry %d: its newest, in order", c.name, i)
		}
	}
	assert.Equal(t, map[string]int{"a": 2 * ringChunk, "b": ringChunk, "c": ringChunk}, held,
		"a took the two chunks, b and c their first only")
	assert.Less(t, l.chunks.Load(), int64(1))
}
