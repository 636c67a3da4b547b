package queue

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// due lists what q.Due yields.
func due[K comparable, N any](q *Queue[K, N]) []K {
	var out []K
	q.Due(func(k K) bool { out = append(out, k); return true })
	return out
}

// TestPick_TakeAChosenDueKey: Due lists the keys a Get could take, in its
// order, and TakeNoted takes the one chosen — not the first — with its
// note, leaving the others due in their order; a key that is not due
// (in flight, delayed, unknown) is not taken, and a key whose delay ended
// is due again.
func TestPick_TakeAChosenDueKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string, []string](testOpts)
		for _, k := range []string{"a", "b", "c", "d"} {
			q.AddNoted(k, func(n *[]string) { *n = append(*n, "added "+k) })
		}
		assert.Equal(t, []string{"a", "b", "c", "d"}, due(q))

		n, s, ok := q.TakeNoted("c")
		require.True(t, ok)
		assert.Equal(t, []string{"added c"}, n)
		assert.Equal(t, []string{"a", "b", "d"}, due(q), "the others keep their order")
		_, _, ok = q.TakeNoted("c")
		assert.False(t, ok, "c is in flight")
		_, _, ok = q.TakeNoted("x")
		assert.False(t, ok, "x is unknown")
		assert.Equal(t, 1, q.InFlight())
		assert.Equal(t, 3, q.Len())

		q.CompleteNoted("c", s, Failure(), nil)
		_, _, ok = q.TakeNoted("c")
		assert.False(t, ok, "c waits out its backoff")
		assert.Equal(t, []string{"a", "b", "d"}, due(q))

		k, _, _, ok := q.GetNoted(t.Context())
		require.True(t, ok)
		assert.Equal(t, "a", k, "Get still takes the first due key")
		time.Sleep(100 * time.Millisecond)
		assert.Equal(t, []string{"b", "d", "c"}, due(q), "c is due again after its backoff")
		_, _, ok = q.TakeNoted("d")
		require.True(t, ok)
		assert.Equal(t, []string{"b", "c"}, due(q))

		q.ShutDown()
		assert.Empty(t, due(q))
		_, _, ok = q.TakeNoted("b")
		assert.False(t, ok, "after ShutDown")
	})
}

// TestPick_APartnerInFlightKeepsItsKeyOut: a key whose partner is in
// flight is neither listed by Due nor taken by TakeNoted (rule Q2 as
// NewWithPartner extends it); once the partner is done it is.
func TestPick_APartnerInFlightKeepsItsKeyOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		partner := func(k string) (string, bool) {
			switch k {
			case "a":
				return "A", true
			case "A":
				return "a", true
			}
			return "", false
		}
		q := NewWithPartner[string, none](testOpts, partner)
		q.AddBatch([]string{"a", "A", "b"})
		_, s, ok := q.TakeNoted("a")
		require.True(t, ok)
		assert.Equal(t, []string{"b"}, due(q))
		_, _, ok = q.TakeNoted("A")
		assert.False(t, ok, "its partner a is in flight")
		q.CompleteNoted("a", s, Success(), nil)
		assert.Equal(t, []string{"A", "b"}, due(q))
		_, _, ok = q.TakeNoted("A")
		assert.True(t, ok)
	})
}

// TestPick_RingRemoveKeepsOrderAcrossTheWrap: a key taken out of the
// middle of the due FIFO when it wraps around its buffer leaves the
// others in order.
func TestPick_RingRemoveKeepsOrderAcrossTheWrap(t *testing.T) {
	var r ring
	for i := range int32(16) {
		r.push(i)
	}
	for range 10 {
		r.pop()
	}
	for i := int32(16); i < 22; i++ {
		r.push(i) // wraps: the buffer holds 16
	}
	require.True(t, r.remove(15))
	require.False(t, r.remove(15))
	var got []int32
	for {
		i, ok := r.pop()
		if !ok {
			break
		}
		got = append(got, i)
	}
	assert.Equal(t, []int32{10, 11, 12, 13, 14, 16, 17, 18, 19, 20, 21}, got)
}
