package work

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// version is a resource that is only metadata, told apart by its version.
type version struct{ md resource.Metadata }

func ver(n uint64) *version {
	v := resource.VersionUndefined
	for range n {
		v = v.Next()
	}
	return &version{md: resource.NewMetadata("ns", "T", "id", v)}
}

func (v *version) Metadata() *resource.Metadata { return &v.md }
func (v *version) Spec() any                    { return nil }
func (v *version) DeepCopy() resource.Resource  { return &version{md: v.md.Copy()} }

func versionOf(l Last) uint64 { return l.Res.Metadata().Version().Value() }

// TestLastSeen_EntriesLiveUntilTheItemThatRanWithThemIsDone: an entry is
// released by the item that ran with it, not by one that ran with an older
// entry (a change meanwhile queued the item again); a destroy of an input
// whose item waits marks its entry gone without requeueing; a destroy
// without an entry, and a change of an input that exists again, leave no
// entry.
func TestLastSeen_EntriesLiveUntilTheItemThatRanWithThemIsDone(t *testing.T) {
	var ls LastSeen
	p := resource.PointerOf(resource.NewPointer("ns", "T", "id"))

	ls.Destroyed(p, ver(1))
	assert.Zero(t, ls.Len(), "a destroy with no item waiting records nothing")

	ls.Queued(p, ver(1), true, nil)
	first, ok := ls.Get(p)
	require.True(t, ok)
	assert.True(t, first.Gone)
	ls.Queued(p, ver(2), true, nil) // queued again while the first run goes on
	ls.Release(p, first.Seq())
	second, ok := ls.Get(p)
	require.True(t, ok, "the first run does not release what the second needs")
	assert.Equal(t, uint64(2), versionOf(second))
	ls.Release(p, second.Seq())
	assert.Zero(t, ls.Len())

	ls.Queued(p, ver(3), false, nil) // a destroy-ready output's item
	live, _ := ls.Get(p)
	assert.False(t, live.Gone)
	ls.Destroyed(p, ver(3))
	gone, ok := ls.Get(p)
	require.True(t, ok)
	assert.True(t, gone.Gone, "destroyed before its item ran")
	assert.Equal(t, live.Seq(), gone.Seq(), "no new item: the waiting one releases it")
	ls.Release(p, live.Seq())
	assert.Zero(t, ls.Len())

	ls.Queued(p, ver(4), true, nil)
	ls.Present(p)
	again, ok := ls.Get(p)
	require.True(t, ok)
	assert.False(t, again.Gone, "an input that exists again is read from the state")
	assert.NotNil(t, again.Prev, "its destroyed version is its previous one (Q4, extended)")
	ls.Release(p, again.Seq())
	assert.Zero(t, ls.Len())
}

// TestLastSeen_PreviousVersionIsTheFirstNotYetMapped (rule Q4, extended):
// the previous version of an entry is the first one recorded until its
// item is done; a destroyed version of an input created again becomes the
// previous one; a presence keeps a previous version, and an entry with
// nothing left goes.
func TestLastSeen_PreviousVersionIsTheFirstNotYetMapped(t *testing.T) {
	var ls LastSeen
	p := resource.PointerOf(resource.NewPointer("ns", "T", "id"))

	ls.Changed(p, ver(1))
	ls.Changed(p, ver(2))
	l, ok := ls.Get(p)
	require.True(t, ok)
	assert.Equal(t, uint64(1), l.Prev.Metadata().Version().Value(), "the first previous version is kept")
	ls.Present(p) // a spec-only change
	l, ok = ls.Get(p)
	require.True(t, ok, "a presence keeps the previous version")
	assert.Equal(t, uint64(1), l.Prev.Metadata().Version().Value())
	ls.Queued(p, ver(3), true, ver(2))
	l, _ = ls.Get(p)
	assert.True(t, l.Gone)
	assert.Equal(t, uint64(1), l.Prev.Metadata().Version().Value(), "a destroy keeps the first previous version")
	ls.Release(p, l.Seq())
	assert.Zero(t, ls.Len())

	ls.Queued(p, ver(4), true, nil)
	ls.Present(p) // created again before MapInput ran
	l, ok = ls.Get(p)
	require.True(t, ok)
	assert.False(t, l.Gone)
	assert.Equal(t, uint64(4), l.Prev.Metadata().Version().Value(), "the destroyed version is the previous one")
	ls.Release(p, l.Seq())

	ls.Queued(p, ver(5), false, nil)
	ls.Present(p)
	assert.Zero(t, ls.Len(), "an entry with nothing left goes")
}
