package inmem

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestAnEntrysAddressIsItsEntryInTheMap: the address entryLocked and
// addEntryLocked give is the entry the map holds for the ID (a store
// through it is what the map reads, a read through it what the map
// holds), as the map grows, shrinks and is written in every other way;
// entryLocked finds no absent ID and adds nothing, addEntryLocked adds an
// absent ID with a nil entry and leaves a present one as it is.
func TestAnEntrysAddressIsItsEntryInTheMap(t *testing.T) {
	ks := newKindStore(testKind, nil, 0, 0, 64, 1<<20)
	model := map[string]unsafe.Pointer{}
	vals := make([]int64, 64) // what entries point to
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 20_000 {
		id := fmt.Sprintf("r%05d", rng.IntN(4000))
		v := unsafe.Pointer(&vals[rng.IntN(len(vals))])
		want, present := model[id]
		switch rng.IntN(4) {
		case 0: // found, written through its address
			at, e := ks.entryLocked(id)
			if !present {
				require.Nil(t, at, "step %d: %s absent", step, id)
				require.Nil(t, e)
				break
			}
			require.Equal(t, want, e, "step %d: the entry", step)
			*at = v
			model[id] = v
		case 1: // added (or found), written through its address
			at, e := ks.addEntryLocked(id)
			require.Equal(t, want, e, "step %d: the entry, nil when added", step)
			*at = v
			model[id] = v
		case 2:
			delete(ks.items, id)
			delete(model, id)
		default:
			ks.items[id] = v
			model[id] = v
		}
		require.Len(t, ks.items, len(model), "step %d", step)
	}
	for id, v := range model {
		require.Equal(t, v, ks.items[id], id)
	}
	at, e := ks.addEntryLocked("new")
	require.Nil(t, e)
	require.NotNil(t, at)
	got, ok := ks.items["new"]
	require.True(t, ok, "added")
	require.Nil(t, got, "with a nil entry")
}
