package inmem

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestS12a_OrderFollowsCreatesAndDestroys: the order a List follows is
// the sorted keys of the store after any sequence of creates (in order
// and not), destroys and creates again between Lists, and a burst of
// creates leaves no storage behind.
func TestS12a_OrderFollowsCreatesAndDestroys(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for round := range 20 {
		items := map[resource.ID]item{}
		var o idOrder
		for range 20 {
			ops := rng.IntN(1000)
			ascending := rng.IntN(3) == 0
			for k := range ops {
				id := fmt.Sprintf("r%05d", rng.IntN(1000))
				if ascending {
					id = fmt.Sprintf("s%03d-%05d", round, k)
				}
				if _, ok := items[id]; ok {
					delete(items, id)
					o.destroyed()
					continue
				}
				items[id] = item{}
				o.created(id)
			}
			want := slices.Sorted(func(yield func(resource.ID) bool) {
				for id := range items {
					if !yield(id) {
						return
					}
				}
			})
			require.Equal(t, want, slices.Clone(o.ids(items)), "round %d", round)
			require.LessOrEqual(t, cap(o.added), addedKeep)
		}
	}
}
