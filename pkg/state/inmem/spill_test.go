package inmem

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
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
