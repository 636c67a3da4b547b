package inmem

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestS12_SortCoalescedOrdersBySeq: coalesced changes come out in the
// order of their changes, for dense seqs (placed in linear time, in
// place) and sparse ones (sorted), with a scratch buffer reused across
// calls of every size.
func TestS12_SortCoalescedOrdersBySeq(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var scratch []int32
	for _, n := range []int{0, 1, 2, 3, 10, 100, 1000, 5000} {
		for _, spread := range []uint64{1, 2, 5, 100} { // 1: consecutive seqs; 100: sorted, not placed
			cs := make([]coalesced, n)
			seqs := rng.Perm(n * int(spread))[:n]
			for i := range cs {
				seq := uint64(seqs[i]) + 1_000_000
				cs[i] = coalesced{spillEntry: spillEntry{seq: seq}, id: fmt.Sprint(seq)}
			}
			scratch = sortCoalesced(cs, scratch)
			for i, c := range cs {
				require.Equal(t, fmt.Sprint(c.seq), c.id, "each change keeps its fields")
				if i > 0 {
					require.Less(t, cs[i-1].seq, c.seq, "n=%d spread=%d: in order, each once", n, spread)
				}
			}
		}
	}
}

// TestS12_SpillLetsGoOfALargeGeneration: a spill generation is kept, once
// empty, for the next lag only while it held at most spareEntries
// resources — a Go map keeps the memory of its largest size, so one that
// held a whole burst is let go once the watcher caught up.
func TestS12_SpillLetsGoOfALargeGeneration(t *testing.T) {
	for _, burst := range []int{spareEntries / 2, 4 * spareEntries} {
		t.Run(fmt.Sprintf("burst=%d", burst), func(t *testing.T) {
			c := newCore(WithHistoryCapacity(64))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := make(chan state.Event) // not read during the burst
			require.NoError(t, c.WatchKind(ctx, testKind, ch))
			require.NoError(t, c.Create(ctx, newPair("first", 0)))
			w := soleKindWatcher(t, c)
			waitTaken(t, c, w) // now blocked sending that change
			for i := range burst {
				require.NoError(t, c.Create(ctx, newPair(fmt.Sprintf("r%05d", i), i)))
			}
			ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
			ks.mu.Lock()
			require.NotNil(t, w.gen, "the watcher lags in the spill")
			ks.mu.Unlock()

			seen := map[resource.ID]bool{}
			for len(seen) < burst+1 {
				ev := recv(t, ch)
				require.Equal(t, state.Created, ev.Type)
				seen[ev.Resource.Metadata().ID()] = true
			}
			ks.mu.Lock()
			defer ks.mu.Unlock()
			require.Nil(t, w.gen, "caught up")
			require.Empty(t, ks.spill)
			if burst <= spareEntries {
				require.NotNil(t, ks.spare, "a small generation is kept for the next lag")
			} else {
				require.Nil(t, ks.spare, "a large generation is let go")
			}
		})
	}
}
