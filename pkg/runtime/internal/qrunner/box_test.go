package qrunner

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

var boxSink resource.Pointer

// An item's pointer is not allocated per item: boxes allocates one chunk
// per boxChunk items (AllocsPerRun counts whole allocations per run).
func TestAnItemsPointerIsNotAllocatedPerItem(t *testing.T) {
	var bx boxes
	k := resource.NewPointer("ns", "T", "id").(resource.PointerKey)
	allocs := testing.AllocsPerRun(16*boxChunk, func() { boxSink = bx.box(k) })
	require.Zero(t, allocs)
}

// A boxed pointer holds its key for good: a type assertion, == and a map
// see the key, whatever is boxed after it.
func TestABoxedPointerIsItsKeyForGood(t *testing.T) {
	var bx boxes
	keys := make([]resource.PointerKey, 3*boxChunk+5)
	ptrs := make([]resource.Pointer, len(keys))
	seen := map[resource.Pointer]int{}
	for i := range keys {
		keys[i] = resource.NewPointer("ns", "T", fmt.Sprint("id-", i)).(resource.PointerKey)
		ptrs[i] = bx.box(keys[i])
		seen[ptrs[i]] = i
	}
	for i, p := range ptrs {
		k, ok := p.(resource.PointerKey)
		require.True(t, ok, "%d: %T", i, p)
		require.Equal(t, keys[i], k)
		require.True(t, p == resource.NewPointer("ns", "T", fmt.Sprint("id-", i)), "%d", i)
		require.Equal(t, i, seen[resource.NewPointer("ns", "T", fmt.Sprint("id-", i))])
		require.Equal(t, fmt.Sprint("id-", i), p.ID())
	}
}

// A pointer handed to another goroutine is read there while the worker
// boxes more (the race detector checks that no slot is written twice).
func TestABoxedPointerIsReadElsewhereWhileMoreAreBoxed(t *testing.T) {
	var bx boxes
	ch := make(chan resource.Pointer)
	done := make(chan error)
	const n = 4 * boxChunk
	go func() { // owned by the test: it ends once ch is closed
		var err error
		var kept []resource.Pointer
		for p := range ch {
			if p.ID() != fmt.Sprint("id-", len(kept)) {
				err = fmt.Errorf("pointer %d reads %s", len(kept), p.ID())
			}
			kept = append(kept, p)
		}
		for i, p := range kept {
			if p.ID() != fmt.Sprint("id-", i) {
				err = fmt.Errorf("pointer %d reads %s", i, p.ID())
			}
		}
		done <- err
	}()
	for i := range n {
		ch <- bx.box(resource.NewPointer("ns", "T", fmt.Sprint("id-", i)).(resource.PointerKey))
	}
	close(ch)
	require.NoError(t, <-done)
}
