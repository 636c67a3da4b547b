package transform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestAKeyHoldsAShortIDInPlaceAndALongOneInTheArena: an ID of up to
// inlineMax bytes is held in its key, a longer one in the arena; each
// reads back as it was, and only the empty ID is empty.
func TestAKeyHoldsAShortIDInPlaceAndALongOneInTheArena(t *testing.T) {
	var a idArena
	for _, id := range []resource.ID{"", "a", strings.Repeat("x", inlineMax), strings.Repeat("y", inlineMax+1), strings.Repeat("z", 300)} {
		before := len(a.b)
		k := a.key(id)
		assert.Equal(t, id, a.view(&k))
		assert.Equal(t, id, a.clone(&k))
		assert.Equal(t, id == "", k.empty(), "%q", id)
		if len(id) <= inlineMax {
			assert.Equal(t, before, len(a.b), "%q is held in place", id)
		} else {
			assert.Equal(t, before+len(id), len(a.b), "%q is held in the arena", id)
		}
	}
}

// TestTheArenaKeepsTheLongIDsOfItsEntriesOnceMostAreDead: once more than
// half of the arena's bytes belong to IDs dropped (entries swept), it is
// rewritten with the IDs of the entries alone, which read back as they
// were; while less than half is dead it is kept as it is.
func TestTheArenaKeepsTheLongIDsOfItsEntriesOnceMostAreDead(t *testing.T) {
	var a idArena
	long := func(i int) resource.ID { return fmt.Sprintf("an-input-whose-id-is-long-%04d", i) }
	var entries []entry
	for i := range 400 {
		entries = append(entries, entry{key: a.key(long(i))})
	}
	size := len(a.b)
	var kept []entry
	var want []resource.ID
	for i := range entries {
		if i%4 == 0 {
			kept = append(kept, entries[i])
			want = append(want, long(i))
			continue
		}
		a.drop(&entries[i].key)
		if i == 200 { // fewer than half dead so far
			a.compact(kept)
			require.Equal(t, size, len(a.b), "less than half of the arena is dead: it is kept")
		}
	}
	a.compact(kept)
	assert.Equal(t, len(want)*len(long(0)), len(a.b), "the arena holds the kept IDs alone")
	assert.Zero(t, a.dead)
	for i := range kept {
		assert.Equal(t, want[i], a.view(&kept[i].key))
	}
}
