package recording

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

type vdef struct{}

func (vdef) Definition() typed.Definition {
	return typed.Definition{Type: "Vs.test.resgraph.dev", DefaultNamespace: "w"}
}

// vAt returns the resource id of kind Vs at version v.
func vAt(id string, v uint64) resource.Resource {
	r := typed.NewDefault[spec, vdef](id, spec{N: int(v)})
	r.Metadata().SetVersion(resource.VersionUndefined)
	for range v {
		r.Metadata().SetVersion(r.Metadata().Version().Next())
	}
	return r
}

var vsKind = resource.NewKind("w", "Vs.test.resgraph.dev")

// twoKinds returns a listing of Ws at wRev and Vs at vRev of rs.
func twoKinds(wRev, vRev uint64, rs ...resource.Resource) *listing {
	s := startState{kindRev: map[resource.KindKey]uint64{resource.KindOf(wsKind): wRev, resource.KindOf(vsKind): vRev}, rev: max(wRev, vRev), base: rs}
	return newListing(s, time.Now(), 0, domains{})
}

func newTestLean(controllers ...string) *lean {
	names := map[string]bool{}
	for _, c := range controllers {
		names[c] = true
	}
	o := &owners{}
	o.set(names)
	return newLean(time.Hour, 1<<30, make(chan struct{}, 1), o, &sizer{reg: codec.NewRegistry()})
}

// updated returns the watch event of an update of old to res at rev.
func updated(old, res resource.Resource, rev uint64) []state.Event {
	return []state.Event{{Type: state.Updated, Resource: res, Old: old, Revision: rev}}
}

// versions returns each resource's ID and version.
func versions(rs []resource.Resource) map[string]uint64 {
	out := map[string]uint64{}
	for _, r := range rs {
		out[r.Metadata().ID()] = r.Metadata().Version().Value()
	}
	return out
}

// TestRC3_ALaggingKindsChangeIsFoldedIntoTheCheckpoint: a lean window's
// checkpoints are listings, kind by kind, the cut the highest of their
// revisions. A change of a kind listed before it and at or below the cut
// belongs to the checkpoint: folded into it whether it came while the
// listing was under way or after it was installed, never lost, and
// recorded once (a change after the window's start, not one of its
// starting state); a change a kind's listing holds is dropped.
func TestRC3_ALaggingKindsChangeIsFoldedIntoTheCheckpoint(t *testing.T) {
	w := newTestLean()
	now := time.Now()
	w.reset(twoKinds(10, 12, at("a", 1), vAt("b", 2)))
	w.addEvents(updated(vAt("b", 1), vAt("b", 2), 11), now) // the listing of Vs holds it
	w.addEvents(updated(at("a", 1), at("a", 2), 11), now)   // Ws was listed at 10: the start's
	w.addEvents(updated(at("a", 2), at("a", 3), 13), now)

	q := w.request()
	w.addEvents(updated(at("a", 3), at("a", 4), 14), now) // while the listing is under way
	w.install(q, twoKinds(13, 16, at("a", 3), vAt("b", 3)))
	assert.Equal(t, map[string]uint64{"a": 4, "b": 3}, versions(w.last.state()), "the change that came while it listed is folded in")
	w.addEvents(updated(at("a", 4), at("a", 5), 15), now) // after it was installed
	w.addEvents(updated(vAt("b", 2), vAt("b", 3), 16), now)

	v := w.viewTo(nil, w.last)
	assert.Equal(t, map[string]uint64{"a": 2, "b": 2}, versions(v.initial), "the start holds the change at 11 of Ws")
	var revs []uint64
	for _, e := range v.entries {
		revs = append(revs, e.rev)
	}
	assert.Equal(t, []uint64{13, 14, 15, 16}, revs, "each change after the start, once")
	assert.Equal(t, map[string]uint64{"a": 5, "b": 3}, versions(v.final), "the checkpoint holds its lagging kind's changes")

	w.install(w.request(), twoKinds(15, 16, at("a", 5), vAt("b", 3)))
	v = w.viewTo(nil, w.last)
	assert.Equal(t, map[string]uint64{"a": 5, "b": 3}, versions(v.initial), "the next start")
	assert.Empty(t, v.entries, "its changes left the window")
}

// TestRC3_AControllersChangeKeepsNoResource: in a lean window a
// controller's change is one entry of 40 bytes without a pointer (the
// collector neither scans the entries nor marks anything for them), its
// ID a copy in the window's ID arena: the window keeps no resource of it
// (no extra, no state now), and keeps one extra for an outside change.
func TestRC3_AControllersChangeKeepsNoResource(t *testing.T) {
	w := newTestLean("c")
	w.reset(twoKinds(1, 1))
	owned := func(id string, v uint64) resource.Resource {
		r := atOf(id, v)
		require.NoError(t, r.Metadata().SetOwner("c"))
		return r
	}
	now := time.Now()
	const n = 1000
	for i := range n {
		w.addEvents(updated(owned(fmt.Sprint("r", i), uint64(i+1)), owned(fmt.Sprint("r", i), uint64(i+2)), uint64(i+2)), now)
	}
	require.Equal(t, n, w.entries.len())
	assert.Equal(t, 0, w.extras.len(), "no resource kept for a controller's change")
	assert.Empty(t, w.pending)
	assert.Empty(t, w.olds)
	assert.Equal(t, uintptr(40), unsafe.Sizeof(leanEntry{}))
	assert.Empty(t, pointerFields(reflect.TypeFor[leanEntry]()), "an entry holds no pointer")
	for i := range n {
		e := w.entries.at(i)
		require.Equal(t, ByController, e.by)
		require.Equal(t, fmt.Sprint("r", i), w.ids.get(e.id()))
	}
	w.addEvents(updated(at("o", 1), at("o", 2), n+2), now)
	assert.Equal(t, 1, w.extras.len(), "an outside change keeps its resource")
	v := w.viewTo(nil, w.newCut(twoKinds(n+2, n+2), w.worlds))
	require.Len(t, v.entries, n+1)
	assert.Equal(t, "o", v.entries[n].key.ID(), "its ID is its resource's")
	assert.Equal(t, "r7", v.entries[7].key.ID())
}

// pointerFields returns the fields of struct type t that hold pointers.
func pointerFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		switch f.Type.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			out = append(out, f.Name)
		}
	}
	return out
}

// TestRC3_AListingThatLetsMostChangesGoKeepsTheIDsOfTheRest: when a new
// start lets go of most of the window's changes, the IDs of the changes
// that stay are copied into an arena of their own (the old one goes):
// each change still names its resource.
func TestRC3_AListingThatLetsMostChangesGoKeepsTheIDsOfTheRest(t *testing.T) {
	w := newTestLean("c")
	w.reset(twoKinds(1, 1))
	now := time.Now()
	for rev := uint64(2); rev <= 101; rev++ {
		r := atOf(fmt.Sprint("r", rev), 2)
		require.NoError(t, r.Metadata().SetOwner("c"))
		w.addEvents([]state.Event{{Type: state.Created, Resource: r, Revision: rev}}, now)
	}
	w.install(w.request(), twoKinds(50, 50))
	w.install(w.request(), twoKinds(90, 90)) // the start is at 50 still: half the IDs stay
	w.install(w.request(), twoKinds(95, 95)) // the start at 90: 11 of 51 stay
	v := w.viewTo(nil, w.newCut(twoKinds(101, 101), w.worlds))
	var ids []string
	for _, e := range v.entries {
		ids = append(ids, e.key.ID())
	}
	want := []string{"r91", "r92", "r93", "r94", "r95", "r96", "r97", "r98", "r99", "r100", "r101"}
	assert.Equal(t, want, ids)
}

// A lean window's entries let their front go by whole chunks (rule RC3's
// bound): after the first p entries are dropped, the log holds only the
// chunks its remaining entries are in, and reads and appends them at
// their places.
func TestRC3_TheWindowsEntriesLetTheirFrontGoByWholeChunks(t *testing.T) {
	var l leanLog
	put := func(from, to int) {
		for i := from; i < to; i++ {
			*l.next() = leanEntry{rev: uint64(i)}
		}
	}
	check := func(first, n int) {
		t.Helper()
		require.Equal(t, n, l.len())
		for i := range n {
			require.Equal(t, uint64(first+i), l.at(i).rev, "entry %d", i)
		}
		require.Less(t, l.off, leanChunk, "the first chunk holds the first entry")
		require.Equal(t, (l.off+n+leanChunk-1)/leanChunk, len(l.chunks), "chunks held")
	}
	put(0, 3*leanChunk+10)
	l.dropFront(leanChunk + 7)
	check(leanChunk+7, 2*leanChunk+3)
	put(3*leanChunk+10, 4*leanChunk+20)
	check(leanChunk+7, 3*leanChunk+13)
	l.dropFront(2*leanChunk - 7)
	check(3*leanChunk, leanChunk+20)
	l.truncate(5)
	check(3*leanChunk, 5)
	l.dropFront(5)
	check(0, 0)
	put(0, 3)
	check(0, 3)
	l.reset()
	check(0, 0)
}

// TestRC3_AnEntryKeepsItsSizeAndWhetherItCoalesced: a lean window's
// entry keeps what its change costs the window's bytes (an outside
// change's resource's size, a world change's size, a controller's
// change's entryOverhead), through a listing that keeps it, and whether
// the change coalesced versions.
func TestRC3_AnEntryKeepsItsSizeAndWhetherItCoalesced(t *testing.T) {
	w := newTestLean("c")
	w.reset(twoKinds(1, 1))
	now := time.Now()
	mine := atOf("m", 3)
	require.NoError(t, mine.Metadata().SetOwner("c"))
	w.addEvents(updated(atOf("m", 1), mine, 2), now) // 1 -> 3: coalesced
	out := at("o", 2)
	w.addEvents(updated(at("o", 1), out, 3), now)
	w.addWorld(&change{at: now, rev: 3, by: ByWorld, op: OpAction, action: "unplug", size: 1234})
	want := entryOverhead + w.sizes.size(out) + 1234
	require.Equal(t, want, w.bytes)
	w.install(w.request(), twoKinds(1, 1)) // keeps every change: the bytes counted again
	require.Equal(t, want, w.bytes)
	v := w.viewTo(nil, w.newCut(twoKinds(3, 3), w.worlds))
	require.Len(t, v.entries, 3)
	assert.True(t, v.entries[0].coalesced, "m went from 1 to 3")
	assert.Equal(t, ByController, v.entries[0].by)
	assert.False(t, v.entries[1].coalesced, "o went from 1 to 2")
	assert.Equal(t, ByOutside, v.entries[1].by)
	assert.Equal(t, "unplug", v.entries[2].action)
}

// TestRC3_TheExtrasOfTheChangesThatStayKeepTheirSizes: when a new start
// lets go of most of the window's outside changes, their extras are
// dropped and the changes that stay keep their resources and sizes.
func TestRC3_TheExtrasOfTheChangesThatStayKeepTheirSizes(t *testing.T) {
	w := newTestLean("c")
	w.reset(twoKinds(1, 1))
	now := time.Now()
	const n = 1200
	var want int64
	for rev := uint64(2); rev < n+2; rev++ {
		r := at(fmt.Sprint("o", rev), 1)
		w.addEvents([]state.Event{{Type: state.Created, Resource: r, Revision: rev}}, now)
		if rev > 1000 {
			want += w.sizes.size(r)
		}
	}
	w.install(w.request(), twoKinds(1000, 1000))
	w.install(w.request(), twoKinds(1000, 1000)) // the start at 1000: 201 of 1200 stay
	require.Equal(t, n+1-1000, w.extras.len(), "the extras of the changes that left are dropped")
	w.install(w.request(), twoKinds(1000, 1000)) // keeps every change: the bytes counted again
	require.Equal(t, want, w.bytes)
	v := w.viewTo(nil, w.newCut(twoKinds(n+1, n+1), w.worlds))
	require.Len(t, v.entries, n+1-1000)
	for i, e := range v.entries {
		require.Equal(t, fmt.Sprint("o", 1001+i), e.res.Metadata().ID())
	}
}
