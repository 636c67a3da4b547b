package transform

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestEntryIsFortyBytesWithoutPointers: a controller keeps an entry per
// input for as long as it runs; the output's ID is not stored in it, and
// it holds no pointer, so that the collector does not scan the entries.
func TestEntryIsFortyBytesWithoutPointers(t *testing.T) {
	assert.Equal(t, uintptr(40), unsafe.Sizeof(entry{}))
	assert.False(t, holdsPointers(reflect.TypeFor[entry]()), "an entry holds a pointer")
}

// holdsPointers reports whether a value of t holds a pointer the collector
// scans.
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for f := range t.Fields() {
			if holdsPointers(f.Type) {
				return true
			}
		}
		return false
	case reflect.Pointer, reflect.UnsafePointer, reflect.String, reflect.Slice, reflect.Map,
		reflect.Chan, reflect.Func, reflect.Interface:
		return true
	}
	return false
}

// key returns an entry of id, its ID in a (a new arena when nil).
func keyed(a *idArena, id resource.ID) entry {
	if a == nil {
		a = &idArena{}
	}
	return entry{key: a.key(id)}
}

// TestOutputIDsOfTheirOwnAreKeptOnlyWhileTheyDiffer: an output ID other
// than the input's is kept aside (outs) while the entry names it, and let
// go as soon as it is the input's own, none, or another.
func TestOutputIDsOfTheirOwnAreKeptOnlyWhileTheyDiffer(t *testing.T) {
	rs := &runState{outs: map[resource.ID]resource.ID{}}
	e := keyed(nil, "a1")
	assert.Equal(t, resource.ID(""), rs.outOf(&e, ""))

	rs.setOut(&e, "a1")
	assert.Equal(t, resource.ID("a1"), rs.outOf(&e, ""))
	assert.Empty(t, rs.outs, "an output with the input's ID is not kept aside")

	rs.setOut(&e, "a1-1")
	assert.Equal(t, resource.ID("a1-1"), rs.outOf(&e, ""))
	assert.Len(t, rs.outs, 1)

	rs.setOut(&e, "a1-0")
	assert.Equal(t, resource.ID("a1-0"), rs.outOf(&e, ""))
	assert.Len(t, rs.outs, 1)

	rs.setOut(&e, "a1")
	assert.Equal(t, resource.ID("a1"), rs.outOf(&e, ""))
	assert.Empty(t, rs.outs, "the other ID is let go")

	rs.setOut(&e, "a1-1")
	rs.setOut(&e, "")
	assert.Equal(t, resource.ID(""), rs.outOf(&e, ""))
	assert.Empty(t, rs.outs, "the other ID is let go")
}

// TestASweptEntryLetsGoOfItsOutputID: an input that is gone has its
// output pending destruction, and its output ID is no longer kept aside.
func TestASweptEntryLetsGoOfItsOutputID(t *testing.T) {
	p := &pass[*fixture.A, *fixture.B]{rs: newRunState(t.Context())}
	e := keyed(&p.rs.ids, "a1")
	p.rs.setOut(&e, "a1-1")
	p.sweep(&e, "")
	assert.Empty(t, p.rs.outs)
	assert.Equal(t, map[resource.ID]struct{}{"a1-1": {}}, p.rs.pending)
}

// TestEntriesGrownForAListLeaveAtMostAQuarterUnused: a pass whose list is
// longer than the entries' capacity gets entries a quarter longer than the
// list at most (as append grows a large slice): a controller keeps them
// for as long as it runs. (The pass's context is done, so it stops before
// its first input and keeps the entries it had, in the grown slice.)
func TestEntriesGrownForAListLeaveAtMostAQuarterUnused(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p := &pass[*fixture.A, *fixture.B]{ctx: ctx, rs: newRunState(t.Context())}
	p.rs.entries = []entry{keyed(&p.rs.ids, "a0")}
	items := make([]resource.Resource, 1000)
	for i := range items {
		items[i] = fixture.New[fixture.ADef](fmt.Sprintf("a%04d", i+1), i)
	}
	assert.False(t, p.merge(items), "the pass stopped")
	assert.Equal(t, []entry{keyed(nil, "a0")}, p.rs.entries, "the entries it had are kept")
	assert.GreaterOrEqual(t, cap(p.rs.entries), len(items))
	assert.LessOrEqual(t, cap(p.rs.entries), len(items)+len(items)/4)
}

// TestAPassGrowsItsEntriesOnceForTheInputsPastTheLast: the inputs of an
// incremental pass that come after every entry are appended in place, and
// the entries are grown for all of them at once.
func TestAPassGrowsItsEntriesOnceForTheInputsPastTheLast(t *testing.T) {
	var a idArena
	entries := []entry{keyed(&a, "a2"), keyed(&a, "a4")}
	for ids, want := range map[string]int{"": 0, "a1 a3": 0, "a1 a4": 0, "a1 a4 a5 a6": 2, "a3 a5": 1, "a5 a6 a7": 3} {
		assert.Equal(t, want, pastLast(&a, entries, strings.Fields(ids)), ids)
	}
	assert.Equal(t, 2, pastLast(&a, nil, []resource.ID{"a1", "a2"}))
}

// TestSeekFromTheLastFoundIsABinarySearch: an incremental pass finds each
// input's entry from where it found the last (seek): the index and
// whether it is there are what a binary search of all the entries gives,
// for IDs in and between the entries, before the first and past the last.
func TestSeekFromTheLastFoundIsABinarySearch(t *testing.T) {
	for _, prefix := range []string{"r", "a-resource-with-an-id-in-the-arena-"} {
		var a idArena
		var ids []resource.ID
		var entries []entry
		for i := range 200 {
			if i%3 != 0 { // gaps of every size between probes
				ids = append(ids, fmt.Sprintf("%s%04d", prefix, i*2))
				entries = append(entries, keyed(&a, ids[len(ids)-1]))
			}
		}
		for _, stride := range []int{1, 2, 5, 17, 64, 400} {
			at := 0
			for q := -1; q < 420; q += stride {
				id := fmt.Sprintf("%s%04d", prefix, q)
				if q < 0 {
					id = "a" // before the first
				}
				want, wantOK := slices.BinarySearch(ids, id)
				got, ok := seek(&a, entries, at, id)
				assert.Equal(t, want, got, "stride %d, %s from %d", stride, id, at)
				assert.Equal(t, wantOK, ok, "stride %d, %s from %d", stride, id, at)
				at = got
			}
		}
	}
	got, ok := seek(&idArena{}, nil, 0, "x")
	assert.Equal(t, 0, got)
	assert.False(t, ok)
}

// TestIncrementalPassesGrowTheEntriesByDoubling: entries that grow a few
// at a time (incremental passes appending new inputs) are reallocated at
// most once per doubling — their copies sum to at most their final number
// — and never have more than half their storage unused.
func TestIncrementalPassesGrowTheEntriesByDoubling(t *testing.T) {
	var entries []entry
	grown, copied := 0, 0
	for n := 1; n <= 100_000; n += n/64 + 1 {
		before := cap(entries)
		entries = growFor(entries, n-len(entries))
		if cap(entries) != before {
			grown++
			copied += before
		}
		entries = entries[:n]
		require.LessOrEqual(t, cap(entries), 2*n, "at most half unused at %d", n)
	}
	assert.LessOrEqual(t, grown, 18, "reallocations for 100k entries")
	assert.LessOrEqual(t, copied, 2*len(entries), "entries copied")
	assert.Len(t, growFor(entries, 0), len(entries))
}
