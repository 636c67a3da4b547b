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

	ls.Queued(p, ver(1), true)
	first, ok := ls.Get(p)
	require.True(t, ok)
	assert.True(t, first.Gone)
	ls.Queued(p, ver(2), true) // queued again while the first run goes on
	ls.Release(p, first.Seq())
	second, ok := ls.Get(p)
	require.True(t, ok, "the first run does not release what the second needs")
	assert.Equal(t, uint64(2), versionOf(second))
	ls.Release(p, second.Seq())
	assert.Zero(t, ls.Len())

	ls.Queued(p, ver(3), false) // a destroy-ready output's item
	live, _ := ls.Get(p)
	assert.False(t, live.Gone)
	ls.Destroyed(p, ver(3))
	gone, ok := ls.Get(p)
	require.True(t, ok)
	assert.True(t, gone.Gone, "destroyed before its item ran")
	assert.Equal(t, live.Seq(), gone.Seq(), "no new item: the waiting one releases it")
	ls.Release(p, live.Seq())
	assert.Zero(t, ls.Len())

	ls.Queued(p, ver(4), true)
	ls.Present(p)
	_, ok = ls.Get(p)
	assert.False(t, ok, "an input that exists again is read from the state")
	assert.Zero(t, ls.Len())
}
