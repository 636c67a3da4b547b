package recording

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRC13_APassLogIsWrittenWithoutALock: a controller's reads and
// commits are logged without taking the pass log's lock (rules RC9 and
// RC13: a controller's goroutine never waits for another's to log); only
// a controller's first entry, which numbers its name, takes it.
func TestRC13_APassLogIsWrittenWithoutALock(t *testing.T) {
	l := newPassLog()
	kind := resource.KindOf(resource.NewKind("ns", "Notes.test"))
	ptr := resource.PointerOf(resource.NewPointer("ns", "Notes.test", "x"))
	l.Read("c", 1, 0, 10, kind, resource.PointerKey{}) // numbers "c"
	l.mu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			l.Read("c", uint64(i+2), 0, uint64(11+i), kind, resource.PointerKey{})
			l.Committed("c", ptr, uint64(i+1), uint64(11+i), uint64(i+2), resource.PointerKey{})
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadline for a failure, not a measure
		t.Error("logging waited for the pass log's lock")
	}
	l.mu.Unlock()
	<-done
	assert.Len(t, l.passes(0, []Kind{{Namespace: "ns", Type: "Notes.test"}}, nil), 101)
}

// TestRC13_EntriesWrittenAtOnceAreReadWhole: controllers logging at once,
// and takes reading meanwhile, see every entry whole: each read a take
// returns is one some goroutine wrote, none made of two (run it with
// -race: the entries are written and read with atomics only).
func TestRC13_EntriesWrittenAtOnceAreReadWhole(t *testing.T) {
	l := newPassLog()
	l.reads = newWordRing(64, 4) // laps often
	kind := resource.KindOf(resource.NewKind("ns", "Notes.test"))
	kinds := []Kind{{Namespace: "ns", Type: "Notes.test"}}
	names := []string{"a", "b", "c", "d"}
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Go(func() {
			for pass := uint64(1); pass <= 500; pass++ {
				for i := range uint32(3) {
					l.Read(name, pass, i, pass*1000+uint64(i), kind, resource.PointerKey{})
				}
			}
		})
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

// TestRC13_AnEntryWhoseSlotIsBeingWrittenIsDropped: a ring's slot that
// a writer a lap behind still writes is neither read (its words may be
// half written) nor written by the next writer that comes to it (that
// entry is dropped): a ring holds whole entries only.
func TestRC13_AnEntryWhoseSlotIsBeingWrittenIsDropped(t *testing.T) {
	r := newWordRing(4, ringWords)
	put := func(v uint64) {
		w := [ringWords]uint64{v, v, v, v, v}
		r.put(&w, resource.PointerKey{})
	}
	got := func() (vs []uint64) {
		r.each(func(w *[ringWords]uint64, _ resource.PointerKey) {
			for _, x := range w {
				require.Equal(t, w[0], x)
			}
			vs = append(vs, w[0])
		})
		return vs
	}
	for v := range uint64(4) {
		put(v + 1)
	}
	assert.Equal(t, []uint64{1, 2, 3, 4}, got())
	slot := &(*r.slots.Load())[0]
	slot.stamp.Store(slot.stamp.Load() | 1) // its writer is at it
	assert.Equal(t, []uint64{2, 3, 4}, got())
	put(5) // comes to slot 0
	assert.Equal(t, []uint64{2, 3, 4}, got())
	slot.stamp.Store(slot.stamp.Load() &^ 1) // its writer is done
	put(6)
	assert.Equal(t, []uint64{3, 4, 1, 6}, got(), "slot 0 kept its writer's entry; 6 replaced 2")
}
