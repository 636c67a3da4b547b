package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// keepingTap keeps every batch the Runtime's watches hand it and gives
// back, as the spare for the next, the slice of the batch before the
// last (emptied), noting what each batch held when it came.
type keepingTap struct {
	mu sync.Mutex
	// kept are the slices kept and not given back, seen what each held
	// when it came; all the IDs of every batch, in order.
	kept [][]state.Event
	seen [][]string
	all  []string
	// batches counts the batches, reused those that came in the slice
	// given back last (spare).
	batches, reused int
	spare           []state.Event
}

func eventIDs(evs []state.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = "<none>"
		if ev.Resource != nil {
			out[i] = ev.Resource.Metadata().ID()
		}
	}
	return out
}

func (k *keepingTap) Changes(resource.KindKey, []state.Event) { panic("Changes of a KeepingChangeTap") }
func (k *keepingTap) Lost(resource.KindKey)                   {}

func (k *keepingTap) ChangesKept(_ resource.KindKey, events []state.Event) ([]state.Event, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.batches++
	if k.spare != nil && &events[:1][0] == &k.spare[:1][0] {
		k.reused++
	}
	k.kept, k.seen, k.all = append(k.kept, events), append(k.seen, eventIDs(events)), append(k.all, eventIDs(events)...)
	k.spare = nil
	if len(k.kept) < 2 {
		return nil, true
	}
	old := k.kept[0]
	k.kept, k.seen = k.kept[1:], k.seen[1:]
	clear(old)
	k.spare = old[:0]
	return k.spare, true
}

// TestTapChanges_AKeepingTapKeepsEachBatch: the Runtime's watches hand a
// KeepingChangeTap each batch in a slice the tap may keep (ChangesKept in
// place of Changes): they never write a kept slice again, and route their
// next batches in the spare the tap gives back.
func TestTapChanges_AKeepingTapKeepsEachBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := captureRuntime("reader", []controller.Input{in(typeA, controller.InputWeak)}, nil)
		e := start(t, runtimetest.WithControllers(c))
		ctx := context.Background()
		tap := &keepingTap{}
		var _ runtime.KeepingChangeTap = tap
		_, remove, err := e.Runtime.TapChanges(ctx, tap, []resource.KindKey{resource.KindOf(kind(typeA))})
		require.NoError(t, err)
		defer remove()
		var want []string
		for i := range 20 {
			want = append(want, fmt.Sprint("r", i))
			require.NoError(t, e.State.Create(ctx, newPair(typeA, want[i], i)))
			synctest.Wait()
		}
		tap.mu.Lock()
		defer tap.mu.Unlock()
		assert.Equal(t, want, tap.all, "every change once, in order")
		for i, evs := range tap.kept {
			assert.Equal(t, tap.seen[i], eventIDs(evs), "a kept slice is as it came")
		}
		require.Greater(t, tap.batches, 2)
		assert.Equal(t, tap.batches-2, tap.reused, "the watch routes each batch after the second in the spare given back")
	})
}
