package transform

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestEntryIsFortyBytesWithOnePointer: a controller keeps an entry per
// input for as long as it runs; the output's ID is not stored in it.
func TestEntryIsFortyBytesWithOnePointer(t *testing.T) {
	assert.Equal(t, uintptr(40), unsafe.Sizeof(entry{}))
}

// TestOutputIDsOfTheirOwnAreKeptOnlyWhileTheyDiffer: an output ID other
// than the input's is kept aside (outs) while the entry names it, and let
// go as soon as it is the input's own, none, or another.
func TestOutputIDsOfTheirOwnAreKeptOnlyWhileTheyDiffer(t *testing.T) {
	rs := &runState{outs: map[resource.ID]resource.ID{}}
	e := entry{id: "a1"}
	assert.Equal(t, resource.ID(""), rs.outOf(&e))

	rs.setOut(&e, "a1")
	assert.Equal(t, resource.ID("a1"), rs.outOf(&e))
	assert.Empty(t, rs.outs, "an output with the input's ID is not kept aside")

	rs.setOut(&e, "a1-1")
	assert.Equal(t, resource.ID("a1-1"), rs.outOf(&e))
	assert.Len(t, rs.outs, 1)

	rs.setOut(&e, "a1-0")
	assert.Equal(t, resource.ID("a1-0"), rs.outOf(&e))
	assert.Len(t, rs.outs, 1)

	rs.setOut(&e, "a1")
	assert.Equal(t, resource.ID("a1"), rs.outOf(&e))
	assert.Empty(t, rs.outs, "the other ID is let go")

	rs.setOut(&e, "a1-1")
	rs.setOut(&e, "")
	assert.Equal(t, resource.ID(""), rs.outOf(&e))
	assert.Empty(t, rs.outs, "the other ID is let go")
}

// TestASweptEntryLetsGoOfItsOutputID: an input that is gone has its
// output pending destruction, and its output ID is no longer kept aside.
func TestASweptEntryLetsGoOfItsOutputID(t *testing.T) {
	p := &pass[*fixture.A, *fixture.B]{rs: newRunState(t.Context())}
	e := entry{id: "a1"}
	p.rs.setOut(&e, "a1-1")
	p.sweep(e)
	assert.Empty(t, p.rs.outs)
	assert.Equal(t, map[resource.ID]struct{}{"a1-1": {}}, p.rs.pending)
}
