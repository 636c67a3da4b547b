package queue

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkIndex checks the table: every key in it once, each findable from
// its home slot without crossing an empty slot, its kept hash its key's.
// Requires q.mu.
func (q *Queue[K, N]) checkIndex() error {
	n := 0
	mask := uint64(len(q.index.slots) - 1)
	for j, s := range q.index.slots {
		if s == 0 {
			continue
		}
		n++
		e := &q.slab[s-1]
		if e.hash != q.hashKey(e.key) {
			return fmt.Errorf("slot %d: key %v kept a hash not its own", j, e.key)
		}
		for p := e.hash & mask; p != uint64(j); p = (p + 1) & mask {
			if q.index.slots[p] == 0 {
				return fmt.Errorf("key %v at slot %d is past an empty slot %d of its run", e.key, j, p)
			}
		}
	}
	if n != q.index.n {
		return fmt.Errorf("index counts %d keys, holds %d", q.index.n, n)
	}
	return nil
}

// mustFind returns k's slab index; it requires q.mu and k known.
func (q *Queue[K, N]) mustFind(k K) int32 {
	i, ok := q.find(k)
	if !ok {
		panic(fmt.Sprint("queue: key not known: ", k))
	}
	return i
}

// A key is hashed once per run: when it is added. Taking it (GetNoted),
// completing it by its slot and forgetting it hash nothing; an add of a
// known key hashes it once more.
func TestAKeyIsHashedOncePerItem(t *testing.T) {
	q := New[string, none](backoff(1, 1))
	var hashes uint64
	q.hashes = &hashes
	ctx := context.Background()
	const n = 3000 // grows the table several times
	for i := range n {
		q.Add(fmt.Sprint("k", i))
	}
	require.EqualValues(t, n, hashes, "adds")
	for range n {
		k, _, s, ok := q.GetNoted(ctx)
		require.True(t, ok)
		q.CompleteNoted(k, s, Success(), nil)
	}
	require.EqualValues(t, n, hashes, "taken and completed by slot")
	require.Zero(t, q.index.n)
	q.Add("again")
	q.Add("again") // coalesced: its one lookup
	require.EqualValues(t, n+2, hashes)
}

// Removing keys in any order leaves every other key findable: the
// backward shift keeps each probe run unbroken, across the table's wrap.
func TestIndexRemovalKeepsEveryOtherKeyFindable(t *testing.T) {
	q := New[int, none](backoff(1, 1))
	ctx := context.Background()
	for round := range 4 {
		for i := range 700 {
			q.Add(i*7 + round)
		}
		// Take them all, then complete every third first, then the rest.
		var taken []int
		var slots []Slot
		for range 700 {
			k, _, s, ok := q.GetNoted(ctx)
			require.True(t, ok)
			taken, slots = append(taken, k), append(slots, s)
		}
		for pass := range 2 {
			for j, k := range taken {
				if (j%3 == 0) == (pass == 0) {
					q.CompleteNoted(k, slots[j], Success(), nil)
					q.mu.Lock()
					err := q.checkIndex()
					q.mu.Unlock()
					require.NoError(t, err)
				}
			}
		}
		require.NoError(t, q.checkInvariants())
	}
}
