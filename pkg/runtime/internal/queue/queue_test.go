package queue

import (
	"context"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

func TestQ1_DedupWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		q.Add("b")
		q.Add("a")
		q.Add("a")
		require.Equal(t, 2, q.Len())

		getNow(t, q, "a") // a kept its first place
		getNow(t, q, "b")
		assert.Equal(t, 0, q.Len())
		assert.Equal(t, 2, q.InFlight())
		q.Done("a", Success())
		q.Done("b", Success())
		assertNothingDue(t, q)
	})
}

func TestQ1_AddBatchDedups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.AddBatch([]string{"a", "b", "a", "c", "b"})
		require.Equal(t, 3, q.Len())
		getNow(t, q, "a")
		q.AddBatch([]string{"a", "d"}) // a is in flight: runs once more after Done
		q.Done("a", Success())
		getNow(t, q, "b")
		getNow(t, q, "c")
		getNow(t, q, "d")
		getNow(t, q, "a")
		assert.Equal(t, 0, q.Len())
	})
}

func TestQ1_AddWhileInFlightRunsExactlyOnceMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Add("a")
		q.Add("a")
		q.Add("a")
		assert.Equal(t, 0, q.Len(), "an in-flight key is not waiting")
		assert.Equal(t, 1, q.InFlight())

		q.Done("a", Success())
		assert.Equal(t, 1, q.Len())
		getNow(t, q, "a")
		q.Done("a", Success())
		assertNothingDue(t, q) // three adds, one more run
		assert.Equal(t, 0, q.Len())
		assert.Equal(t, 0, q.InFlight())
	})
}

func TestQ2_InFlightKeyNotHandedOutBeforeDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Add("a")

		second := getAsync(t.Context(), q)
		synctest.Wait()
		select {
		case r := <-second:
			t.Fatalf("Get returned %v while it was in flight", r.k)
		default:
		}

		q.Done("a", Success())
		r := <-second
		assert.True(t, r.ok)
		assert.Equal(t, "a", r.k)
	})
}

func TestFIFO_DueKeysInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[int, none](testOpts)
		for i := range 100 {
			q.Add(i)
		}
		for i := range 100 {
			getNow(t, q, i)
		}
	})
}

func TestFIFO_DelayedKeyQueuesBehindKeysDueBeforeIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure()) // a is due at 100ms
		q.Add("x")
		q.Add("y")
		time.Sleep(200 * time.Millisecond) // advance the virtual clock
		q.Add("c")                         // became due after a

		getNow(t, q, "x")
		getNow(t, q, "y")
		getNow(t, q, "a")
		getNow(t, q, "c")
	})
}

func TestFIFO_DueKeysBeforeDelayedKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		q.Add("b")

		getNow(t, q, "b")
		q.Done("b", Success())
		getAfter(t, q, "a", 100*time.Millisecond)
	})
}

func TestQ3_BackoffDoublesCapsAndResetsOnSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		for _, want := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
			q.Done("a", Failure())
			getAfter(t, q, "a", want*time.Millisecond)
		}

		q.Done("a", Success())
		assert.Equal(t, 0, q.Len(), "a succeeded key leaves the queue")
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		getAfter(t, q, "a", 100*time.Millisecond) // backoff restarted
	})
}

func TestQ3_BackoffIsPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		getAfter(t, q, "a", 100*time.Millisecond)
		q.Done("a", Failure())
		getAfter(t, q, "a", 200*time.Millisecond)
		q.Done("a", Failure()) // third failure of a: due in 400ms

		q.Add("b")
		getNow(t, q, "b")
		q.Done("b", Failure()) // first failure of b: due in 100ms
		getAfter(t, q, "b", 100*time.Millisecond)
		getAfter(t, q, "a", 300*time.Millisecond)
	})
}

func TestQ3_RequeueAfterExactInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", RequeueAfter(750*time.Millisecond))
		assert.Equal(t, 1, q.Len())
		getAfter(t, q, "a", 750*time.Millisecond)
		q.Done("a", RequeueAfter(750*time.Millisecond))
		getAfter(t, q, "a", 750*time.Millisecond)
	})
}

func TestQ3_RequeueAfterNeitherCountsNorResetsFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		getAfter(t, q, "a", 100*time.Millisecond)
		q.Done("a", RequeueAfter(50*time.Millisecond))
		getAfter(t, q, "a", 50*time.Millisecond)
		q.Done("a", RequeueAfter(5*time.Second))
		getAfter(t, q, "a", 5*time.Second)
		q.Done("a", Failure()) // second failure
		getAfter(t, q, "a", 200*time.Millisecond)
	})
}

func TestQ3_RequeueAfterNonPositiveIsNowBehindDueKeys(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		t.Run(d.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string, none](testOpts)
				q.Add("a")
				getNow(t, q, "a")
				q.Add("b")
				q.Done("a", RequeueAfter(d))
				getNow(t, q, "b")
				getNow(t, q, "a")
			})
		})
	}
}

func TestQ3_AddDuringBackoffRunsNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure())
		time.Sleep(10 * time.Millisecond) // a is waiting out its 100ms backoff
		q.Add("a")
		getNow(t, q, "a")

		q.Done("a", Failure()) // the failure count was kept: second failure
		getAfter(t, q, "a", 200*time.Millisecond)
	})
}

func TestQ3_AddDuringRequeueDelayRunsNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", RequeueAfter(time.Minute))
		time.Sleep(time.Second)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Success())
		assertNothingDue(t, q) // the requeue was replaced, not kept beside
	})
}

func TestQ3_AddedWhileInFlightRunsNowWhateverTheResult(t *testing.T) {
	// A fresh change during processing runs now; the failure count is
	// updated by the result (counted, kept or reset), as shown by the delay
	// after one more failure.
	for _, tc := range []struct {
		name      string
		result    Result
		nextDelay time.Duration
	}{
		{"success resets", Success(), 100 * time.Millisecond},
		{"failure counts", Failure(), 400 * time.Millisecond},
		{"requeue keeps", RequeueAfter(time.Minute), 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string, none](testOpts)
				q.Add("a")
				getNow(t, q, "a")
				q.Done("a", Failure())
				getAfter(t, q, "a", 100*time.Millisecond) // one failure so far

				q.Add("a")
				q.Done("a", tc.result)
				getNow(t, q, "a")
				q.Done("a", Failure())
				getAfter(t, q, "a", tc.nextDelay)
			})
		})
	}
}

func TestFairness_KeyReaddedWhileInFlightGoesToTheBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.AddBatch([]string{"hot", "b", "c", "d"})
		var order []string
		for range 12 {
			k, _ := get(t, q)
			order = append(order, k)
			if k == "hot" {
				q.Add("hot") // changes again while processed
			}
			q.Done(k, Success())
			if k != "hot" {
				q.Add(k)
			}
		}
		assert.Equal(t, []string{
			"hot", "b", "c", "d",
			"hot", "b", "c", "d",
			"hot", "b", "c", "d",
		}, order)
	})
}

func TestFairness_FailingKeyDoesNotStarveOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](backoff(time.Millisecond, time.Millisecond))
		q.Add("failing")
		for i := range 50 {
			q.Add(string(rune('A' + i)))
		}
		served := map[string]int{}
		for range 200 {
			k, _ := get(t, q)
			served[k]++
			time.Sleep(time.Millisecond) // each run takes 1ms of virtual time
			if k == "failing" {
				q.Done(k, Failure())
			} else {
				q.Done(k, Success())
				q.Add(k) // always more work for the others too
			}
		}
		for i := range 50 {
			assert.GreaterOrEqual(t, served[string(rune('A'+i))], 3, "key %c starved", 'A'+i)
		}
		assert.GreaterOrEqual(t, served["failing"], 2, "the failing key is retried")
	})
}

func TestShutDownWakesEveryGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		q.Add("b")
		getNow(t, q, "a")
		getNow(t, q, "b")
		q.Done("b", Failure()) // waiting out a backoff

		var results []<-chan getResult[string]
		for range 4 {
			results = append(results, getAsync(t.Context(), q))
		}
		synctest.Wait()
		q.ShutDown()
		for _, ch := range results {
			r := <-ch
			assert.False(t, r.ok)
		}

		q.ShutDown() // idempotent
		q.Add("c")
		q.AddBatch([]string{"d"})
		assert.Equal(t, 0, q.Len(), "waiting keys are dropped, adds ignored")
		k, ok := q.Get(t.Context())
		assert.False(t, ok, "Get after ShutDown returned %q", k)

		assert.Equal(t, 1, q.InFlight())
		q.Done("a", Failure()) // still accepted, not requeued
		assert.Equal(t, 0, q.InFlight())
		assert.Equal(t, 0, q.Len())
	})
}

func TestContextCancelWakesGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		ctx, cancel := context.WithCancel(t.Context())
		res := getAsync(ctx, q)
		synctest.Wait()
		cancel()
		r := <-res
		assert.False(t, r.ok)

		q.Add("a")
		k, ok := q.Get(ctx)
		assert.False(t, ok, "Get with a done context returned %q", k)
		assert.Equal(t, 1, q.Len(), "no key is taken by a Get with a done context")
		getNow(t, q, "a")
	})
}

func TestLenAndInFlightAccounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		check := func(wantLen, wantInFlight int) {
			t.Helper()
			assert.Equal(t, wantLen, q.Len(), "Len")
			assert.Equal(t, wantInFlight, q.InFlight(), "InFlight")
		}
		check(0, 0)
		q.AddBatch([]string{"a", "b", "c"})
		check(3, 0)
		getNow(t, q, "a")
		getNow(t, q, "b")
		check(1, 2)
		q.Done("a", Failure()) // delayed: still waiting
		check(2, 1)
		q.Done("b", RequeueAfter(time.Minute))
		check(3, 0)
		getNow(t, q, "c")
		q.Add("c")
		check(2, 1)
		q.Done("c", Success()) // re-added: due again
		check(3, 0)
		getNow(t, q, "c")
		q.Done("c", Success())
		check(2, 0)
		getAfter(t, q, "a", 100*time.Millisecond)
		q.Done("a", Success())
		check(1, 0)
	})
}

func TestDonePanicsForKeyNotInFlight(t *testing.T) {
	q := New[string, none](testOpts)
	assert.Panics(t, func() { q.Done("unknown", Success()) })
	q.Add("due")
	assert.Panics(t, func() { q.Done("due", Success()) })
	assert.Equal(t, 1, q.Len())
}

// TestCompleteNoted_BySlot: a key taken by GetNoted is completed at its
// slot; a slot that holds another key, or a key no longer in flight, is
// refused as a key not in flight is, and changes nothing.
func TestCompleteNoted_BySlot(t *testing.T) {
	q := New[string, none](testOpts)
	q.AddBatch([]string{"a", "b"})
	a, _, sa, _ := q.GetNoted(t.Context())
	b, _, sb, _ := q.GetNoted(t.Context())
	require.Equal(t, []string{"a", "b"}, []string{a, b})
	assert.Panics(t, func() { q.CompleteNoted("a", sb, Success(), nil) }, "b's slot")
	assert.Equal(t, 2, q.InFlight())
	q.Add("a")
	q.CompleteNoted("a", sa, Success(), nil)
	assert.Equal(t, 1, q.Len(), "a, added while in flight, is due again")
	q.CompleteNoted("b", sb, Success(), nil)
	assert.Panics(t, func() { q.CompleteNoted("b", sb, Success(), nil) }, "b completed")
	assert.Zero(t, q.InFlight())
	assert.Equal(t, 1, q.Len())
}

func TestTimekeeper_ParkedGetWakesForAnEarlierDelayedKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](backoff(time.Second, time.Minute))
		q.AddBatch([]string{"a", "b"})
		getNow(t, q, "a")
		getNow(t, q, "b")
		start := time.Now()
		q.Done("a", Failure()) // due at 1s
		r1 := getAsync(t.Context(), q)
		r2 := getAsync(t.Context(), q)
		synctest.Wait() // both parked; one has a timer for 1s

		q.Done("b", RequeueAfter(100*time.Millisecond))
		got := map[string]time.Duration{}
		for _, ch := range []<-chan getResult[string]{r1, r2} {
			r := <-ch
			require.True(t, r.ok)
			got[r.k] = r.at.Sub(start)
		}
		assert.Equal(t, map[string]time.Duration{"b": 100 * time.Millisecond, "a": time.Second}, got)
	})
}

func TestTimekeeper_CanceledTimekeeperHandsOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](backoff(time.Second, time.Minute))
		q.Add("a")
		getNow(t, q, "a")
		start := time.Now()
		q.Done("a", Failure()) // due at 1s

		ctx1, cancel1 := context.WithCancel(t.Context())
		r1 := getAsync(ctx1, q)
		synctest.Wait() // the first parked Get keeps the timer
		r2 := getAsync(t.Context(), q)
		synctest.Wait()
		time.Sleep(500 * time.Millisecond)
		cancel1()

		assert.False(t, (<-r1).ok)
		r := <-r2
		require.True(t, r.ok)
		assert.Equal(t, "a", r.k)
		assert.Equal(t, time.Second, r.at.Sub(start))
	})
}

func TestWakeup_CanceledSignalledGetPassesTheKeyOn(t *testing.T) {
	// One of two parked Gets is woken for a new key and canceled at the same
	// moment; whichever it was, the other Get must take the key. The add
	// and the cancel happen under the queue's lock, so that the woken Get
	// cannot take the key before its context is canceled.
	for _, cancelFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "first canceled", false: "second canceled"}[cancelFirst], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string, none](testOpts)
				ctx1, cancel1 := context.WithCancel(t.Context())
				ctx2, cancel2 := context.WithCancel(t.Context())
				defer cancel2()
				r1 := getAsync(ctx1, q)
				synctest.Wait()
				r2 := getAsync(ctx2, q)
				synctest.Wait()

				canceled, other := r1, r2
				q.mu.Lock()
				if _, due := q.add("k"); due { // what Add does, without releasing the lock
					q.kick()
				}
				if cancelFirst {
					cancel1()
				} else {
					cancel2()
					canceled, other = r2, r1
				}
				q.mu.Unlock()
				assert.False(t, (<-canceled).ok)
				r := <-other
				assert.True(t, r.ok)
				assert.Equal(t, "k", r.k)
				cancel1()
			})
		})
	}
}

func TestKeysMayBeResourcePointers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[resource.Pointer, none](testOpts)
		p := resource.NewPointer("ns", "T", "1")
		q.Add(p)
		q.Add(resource.NewPointer("ns", "T", "1")) // equal pointer: stored once
		require.Equal(t, 1, q.Len())
		getNow(t, q, p)
		q.Done(resource.NewPointer("ns", "T", "1"), Success())
		assert.Equal(t, 0, q.InFlight())
	})
}

func TestHugeRequeueDelaySaturates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", RequeueAfter(math.MaxInt64))
		assert.Equal(t, 1, q.Len())
		q.Add("a")
		getNow(t, q, "a")
	})
}

func TestWakeup_EveryParkedGetTakesOneOfABatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		var results []<-chan getResult[string]
		for range 3 {
			results = append(results, getAsync(t.Context(), q))
		}
		synctest.Wait()
		q.AddBatch([]string{"a", "b", "c"})
		got := map[string]bool{}
		for _, ch := range results {
			r := <-ch
			require.True(t, r.ok)
			got[r.k] = true
		}
		assert.Equal(t, map[string]bool{"a": true, "b": true, "c": true}, got)
		assert.Equal(t, 3, q.InFlight())
	})
}

// TestDone_ReturnsTheDelayApplied: Done reports after how long the key is
// due again, which the Runtime logs with a retry: the backoff of a failure,
// the interval of a requeue, 0 when it is due now (added while in flight)
// or forgotten.
func TestDone_ReturnsTheDelayApplied(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.Add("a")
		getNow(t, q, "a")
		for _, want := range []time.Duration{100, 200, 400} {
			assert.Equal(t, want*time.Millisecond, q.Done("a", Failure()))
			getAfter(t, q, "a", want*time.Millisecond)
		}
		assert.Equal(t, 5*time.Second, q.Done("a", RequeueAfter(5*time.Second)))
		getAfter(t, q, "a", 5*time.Second)
		q.Add("a") // while in flight: due now whatever the result
		assert.Zero(t, q.Done("a", Failure()))
		getNow(t, q, "a")
		assert.Zero(t, q.Done("a", RequeueAfter(-time.Second)))
		getNow(t, q, "a")
		assert.Zero(t, q.Done("a", Success()))
		q.Add("a")
		getNow(t, q, "a")
		q.ShutDown()
		assert.Zero(t, q.Done("a", Failure()))
	})
}

// pairOf is the partner relation of the partner tests: "a" and "A" are
// partners, and so on; "-" has none.
func pairOf(k string) (string, bool) {
	switch {
	case k == "-":
		return "", false
	case k == strings.ToLower(k):
		return strings.ToUpper(k), true
	default:
		return strings.ToLower(k), true
	}
}

// TestPartner_NeverInFlightTogether: a due key whose partner is in flight
// is not handed out, keys after it are, and it is handed out once the
// partner is done; it counts as waiting meanwhile.
func TestPartner_NeverInFlightTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewWithPartner[string, none](testOpts, pairOf)
		q.AddBatch([]string{"a", "A", "b", "-"})
		getNow(t, q, "a")
		getNow(t, q, "b") // A is blocked by a
		getNow(t, q, "-")
		assert.Equal(t, 1, q.Len(), "the blocked key waits")
		st := q.Stats(10)
		assert.Equal(t, 1, st.Due, "a blocked key counts as due")
		assertNothingDue(t, q)
		q.Add("A") // already waiting: stored once
		q.Done("b", Success())
		q.Done("-", Success())
		assertNothingDue(t, q)
		q.Done("a", Success())
		getNow(t, q, "A")
		q.Add("a")
		assertNothingDue(t, q) // a is blocked by A now
		q.Done("A", Success())
		getNow(t, q, "a")
		q.Done("a", Success())
		assert.Zero(t, q.Len())
	})
}

// TestPartner_DelayedAndDirtyKeys: a key that becomes due while its
// partner is in flight — after a backoff, or added again during its own
// run — waits for the partner too, and its partner's own retry keeps its
// backoff.
func TestPartner_DelayedAndDirtyKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewWithPartner[string, none](testOpts, pairOf)
		q.Add("a")
		getNow(t, q, "a")
		q.Done("a", Failure()) // due again after 100ms
		q.Add("A")
		getNow(t, q, "A")
		time.Sleep(200 * time.Millisecond) // a's backoff is over: it is blocked
		assertNothingDue(t, q)
		q.Add("A") // dirty: A runs once more after its Done
		q.Done("A", Failure())
		getNow(t, q, "a") // a was blocked first: it goes first
		assertNothingDue(t, q)
		q.Done("a", Success())
		getNow(t, q, "A")
		q.Done("A", Failure())
		getAfter(t, q, "A", 200*time.Millisecond) // the second consecutive failure
		q.Done("A", Success())
		assert.Zero(t, q.Len())
	})
}

// TestPartner_ShutDownDropsBlockedKeys: blocked keys are dropped by
// ShutDown like every waiting key.
func TestPartner_ShutDownDropsBlockedKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewWithPartner[string, none](testOpts, pairOf)
		q.AddBatch([]string{"a", "A"})
		getNow(t, q, "a")
		assertNothingDue(t, q)
		q.ShutDown()
		assert.Zero(t, q.Len())
		q.Done("a", Success())
		assert.Zero(t, q.InFlight())
	})
}

// TestFailing_CountsKeysWhoseLastResultFailed: Failing counts the keys whose
// last Done reported a failure (Failure, RequeueAfterFailure) — the
// QController status's failing items — until they succeed or are requeued
// without one; a key re-added while in flight keeps its flag; ShutDown
// leaves the count as it was.
func TestFailing_CountsKeysWhoseLastResultFailed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, none](testOpts)
		q.AddBatch([]string{"a", "b", "c"})
		getNow(t, q, "a")
		getNow(t, q, "b")
		getNow(t, q, "c")
		q.Done("a", Failure())
		q.Done("b", RequeueAfterFailure(time.Minute))
		q.Done("c", RequeueAfter(time.Minute))
		assert.Equal(t, 2, q.Failing(), "a failed, b failed and is requeued, c is requeued without a failure")

		getAfter(t, q, "a", 100*time.Millisecond)
		q.Add("a")
		q.Done("a", Failure())
		assert.Equal(t, 2, q.Failing(), "a failed again: counted once")
		getNow(t, q, "a") // re-added while in flight: due now
		q.Done("a", Success())
		assert.Equal(t, 1, q.Failing(), "a succeeded")

		getAfter(t, q, "b", time.Minute-100*time.Millisecond)
		getNow(t, q, "c")
		q.Done("b", RequeueAfter(time.Second))
		assert.Equal(t, 0, q.Failing(), "b requeued without a failure")
		q.Done("c", Failure())
		assert.Equal(t, 1, q.Failing())
		q.ShutDown()
		assert.Equal(t, 1, q.Failing(), "the count at shutdown")
	})
}
