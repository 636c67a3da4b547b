package recording

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRC3_TheSlotTableNumbersEachResourceOnce: the window's table gives
// each resource one slot, the same one every time (the same ID in two
// kinds is two resources), through its growth and a compaction that
// keeps every other slot (renumbered, their pointers kept).
func TestRC3_TheSlotTableNumbersEachResourceOnce(t *testing.T) {
	tab := newSlotTable()
	md := func(kind, i int) *resource.Metadata {
		m := resource.NewMetadata(resource.Namespace(fmt.Sprint("ns", kind)), "Ws.test.resgraph.dev", fmt.Sprint("r", i), resource.VersionUndefined)
		return &m
	}
	const n = 5000
	for round := range 2 {
		for i := range n {
			for k := range 2 {
				s, added := tab.lookup(md(k, i))
				require.Equal(t, round == 0, added)
				require.Equal(t, uint32(2*i+k), s)
			}
		}
	}
	require.Equal(t, 2*n, tab.len())
	used := make([]bool, tab.len())
	for s := range used {
		used[s] = s%2 == 1
	}
	remap := tab.keep(used)
	require.Equal(t, n, tab.len())
	keys := tab.keys()
	for i := range n {
		s, added := tab.lookup(md(1, i))
		require.False(t, added, "a kept resource keeps a slot")
		assert.Equal(t, remap[2*i+1], s)
		assert.Equal(t, resource.PointerOf(md(1, i)), keys[s])
	}
	s, added := tab.lookup(md(0, 0))
	assert.True(t, added, "a dropped resource gets a new slot")
	assert.Equal(t, uint32(n), s)
}
