package queue

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQ2_StressExclusiveAndNoLostAdds runs many producers and workers in
// real time (run it with -race) and checks that no key is ever processed by
// two workers at once (Q2) and that every Add is followed by a run that
// starts after it (Q1: no add is lost, in flight or not), across successes,
// failures and requeues.
func TestQ2_StressExclusiveAndNoLostAdds(t *testing.T) { stress(t, false) }

// TestPartner_StressExclusiveAndNoLostAdds is the same with partners (keys
// 2n and 2n+1): a key and its partner are never processed at once either.
func TestPartner_StressExclusiveAndNoLostAdds(t *testing.T) { stress(t, true) }

func stress(t *testing.T, partners bool) {
	const (
		keys      = 64
		workers   = 8
		producers = 4
		adds      = 5000 // per producer
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	opts := backoff(time.Microsecond, 50*time.Microsecond)
	q := New[int, none](opts)
	group := func(k int) int { return k } // keys that must not run at once
	if partners {
		q = NewWithPartner[int, none](opts, func(k int) (int, bool) { return k ^ 1, true })
		group = func(k int) int { return k / 2 }
	}
	var (
		busy    [keys]atomic.Int32 // workers processing a key of the group now
		pending [keys]atomic.Bool  // an Add that no run has started after yet
		runs    atomic.Int64
		overlap atomic.Int64
	)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for {
				k, ok := q.Get(ctx)
				if !ok {
					return
				}
				if busy[group(k)].Add(1) != 1 {
					overlap.Add(1)
				}
				pending[k].Store(false)
				runs.Add(1)
				if rng.IntN(4) == 0 {
					time.Sleep(time.Duration(rng.IntN(20)) * time.Microsecond) // simulated work
				}
				busy[group(k)].Add(-1)
				switch n := rng.IntN(10); {
				case n < 6:
					q.Done(k, Success())
				case n < 8:
					q.Done(k, Failure())
				case n < 9:
					q.Done(k, RequeueAfter(0))
				default:
					q.Done(k, RequeueAfter(time.Duration(rng.IntN(30))*time.Microsecond))
				}
			}
		})
	}

	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(1000+p)))
			for i := range adds {
				if i%50 == 0 {
					batch := make([]int, 1+rng.IntN(8))
					for j := range batch {
						batch[j] = rng.IntN(keys)
						pending[batch[j]].Store(true)
					}
					q.AddBatch(batch)
					continue
				}
				k := rng.IntN(keys)
				pending[k].Store(true)
				q.Add(k)
				runtime.Gosched() // let workers interleave with the adds
			}
		})
	}
	pwg.Wait()

	require.Eventually(t, func() bool {
		return q.Len() == 0 && q.InFlight() == 0
	}, 30*time.Second, time.Millisecond, "queue never drained")
	cancel()
	wg.Wait()

	assert.Zero(t, overlap.Load(), "a key (or a key and its partner) was processed by two workers at once")
	for k := range keys {
		assert.False(t, pending[k].Load(), "key %d was added and never run afterwards", k)
	}
	assert.Positive(t, runs.Load())
	t.Logf("%d runs for %d adds", runs.Load(), producers*adds)
}
