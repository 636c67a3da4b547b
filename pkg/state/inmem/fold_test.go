package inmem

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// parkedKindWatcher waits until w has parked (it has delivered everything
// and waits for a write) and returns with the kind's lock held, so that
// the watcher's own fields may be read; the caller unlocks.
func parkedKindWatcher(t *testing.T, ks *kindStore, w *kindWatcher) {
	t.Helper()
	require.Eventually(t, func() bool {
		ks.mu.Lock()
		if ks.parking != nil && slices.Contains(ks.parking.members, w) {
			return true
		}
		ks.mu.Unlock()
		return false
	}, testTimeout, pollInterval)
}

// TestS12_CatchUpLetsGoOfALargeFold: once a kind watcher delivered a
// catch-up (rule S12) folded over more than foldKeep resources, it keeps
// neither the fold map nor the coalesced slice nor the sort scratch that
// catch-up grew; after a catch-up over fewer resources it keeps them for
// the next lag. Both through the ring (catchUp) and through the spill
// (drain).
func TestS12_CatchUpLetsGoOfALargeFold(t *testing.T) {
	for _, tc := range []struct {
		path      string
		capacity  int
		resources int
		updates   int
	}{
		{"ring", 16384, foldKeep / 2, 2},
		{"ring", 16384, 2 * foldKeep, 2},
		{"spill", 64, foldKeep / 2, 1},
		{"spill", 64, 2 * foldKeep, 1},
	} {
		t.Run(fmt.Sprintf("%s/resources=%d", tc.path, tc.resources), func(t *testing.T) {
			c := newCore(WithHistoryCapacity(tc.capacity), WithHistoryBytes(1<<30))
			ks := c.store(resource.KindOf(resource.NewKind(testNS, testType)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := make(chan state.Event) // not read during the burst
			require.NoError(t, c.WatchKind(ctx, testKind, ch))
			w := soleKindWatcher(t, c)
			require.NoError(t, c.Create(ctx, newPair("blocker", 0)))
			waitTaken(t, c, w) // blocked sending Created(blocker)

			rs := make([]*pair, tc.resources)
			for i := range rs {
				rs[i] = newPair(fmt.Sprintf("r%05d", i), 0)
				require.NoError(t, c.Create(ctx, rs[i]))
			}
			for u := range tc.updates {
				for _, r := range rs {
					r.TypedSpec().A = u + 1
					require.NoError(t, c.Update(ctx, r))
				}
			}
			changes := tc.resources * (1 + tc.updates)
			seen := view{}
			events := 0
			for len(seen) < tc.resources+1 || version(seen[rs[0].Metadata().ID()]) < version(rs[0]) ||
				version(seen[rs[len(rs)-1].Metadata().ID()]) < version(rs[len(rs)-1]) {
				seen.apply(t, recv(t, ch))
				events++
			}
			require.Less(t, events, changes, "the backlog was coalesced")

			parkedKindWatcher(t, ks, w)
			defer ks.mu.Unlock()
			if tc.resources <= foldKeep {
				require.NotNil(t, w.coal, "a small catch-up's memory is kept for the next lag")
				if tc.path == "ring" {
					require.NotNil(t, w.local, "a small fold is kept for the next lag")
				}
				return
			}
			require.Nil(t, w.local, "the fold map is let go")
			require.Zero(t, w.localPeak)
			require.LessOrEqual(t, cap(w.coal), foldKeep, "the coalesced slice is let go")
			require.LessOrEqual(t, cap(w.sortScratch), sortKeep, "the sort scratch is let go")
		})
	}
}
