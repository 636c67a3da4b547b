package resource_test

import (
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// labelled returns metadata with an owner, a finalizer, a label and an
// annotation.
func labelled(id string) resource.Metadata {
	md := resource.NewMetadata("ns", "T", id, resource.NewVersion(2))
	md.ReplaceOwner("ctrl")
	md.Finalizers().Add("f")
	md.Labels().Set("l", "1")
	md.Annotations().Set("a", "1")
	return md
}

// TestMetadataLayout: the owner, finalizers, labels and annotations take
// one pointer in the metadata, which is 64 bytes (the phase and the
// frozen flag in the spare bits of the timestamps' nanoseconds).
func TestMetadataLayout(t *testing.T) {
	assert.Equal(t, uintptr(64), unsafe.Sizeof(resource.Metadata{}))
}

// TestR2_CopyOfFrozenSharesUntilChanged: a copy of a frozen metadata
// holds no storage of its own for its owner, finalizers, labels and
// annotations (it shares the snapshot's) until it changes one of them;
// a change of the copy, of any of the four, never shows in the snapshot
// nor in another copy, and the copy stays Equal to the snapshot until
// then (rule R2).
func TestR2_CopyOfFrozenSharesUntilChanged(t *testing.T) {
	change := map[string]func(md *resource.Metadata){
		"owner":       func(md *resource.Metadata) { md.ReplaceOwner("other") },
		"finalizers":  func(md *resource.Metadata) { md.Finalizers().Add("g") },
		"finalizer":   func(md *resource.Metadata) { md.Finalizers().Remove("f") },
		"labels":      func(md *resource.Metadata) { md.Labels().Set("l", "2") },
		"annotations": func(md *resource.Metadata) { md.Annotations().Delete("a") },
	}
	for name, fn := range change {
		t.Run(name, func(t *testing.T) {
			snap := labelled("id")
			want := labelled("id")
			require.Positive(t, snap.ApproxSize(), "not frozen: its own storage")
			snap.Freeze()
			require.True(t, snap.Frozen())
			require.Zero(t, snap.ApproxSize(), "frozen: shared from now on")

			c1, c2 := snap.Copy(), snap.Copy()
			require.False(t, c1.Frozen(), "a copy may be changed")
			require.Zero(t, c1.ApproxSize(), "a copy of a frozen metadata shares its storage")
			require.True(t, c1.Equal(snap))

			fn(&c1)
			assert.Positive(t, c1.ApproxSize(), "changed: its own storage")
			assert.False(t, c1.Equal(snap))
			assert.True(t, snap.Equal(want), "the snapshot is unchanged")
			assert.True(t, c2.Equal(want), "another copy is unchanged")
			assert.Equal(t, want.String(), snap.String())
			v, _ := snap.Labels().Get("l")
			w, _ := snap.Annotations().Get("a")
			assert.Equal(t, "1"+"1", v+w)
			assert.Equal(t, resource.Finalizers{"f"}, *snap.Finalizers())
			assert.Equal(t, "ctrl", snap.Owner())
		})
	}
}

// TestR2_CopyOfUnfrozenSharesNothing: a copy of a metadata that is not
// frozen gets storage of its own, so that changing the original does not
// change the copy (rule R2), whatever the original shared before.
func TestR2_CopyOfUnfrozenSharesNothing(t *testing.T) {
	snap := labelled("id")
	snap.Freeze()
	c := snap.Copy()
	c.Labels().Set("own", "yes") // c now holds its own storage
	cc := c.Copy()
	c.Labels().Set("l", "changed")
	c.Finalizers().Add("g")
	v, _ := cc.Labels().Get("l")
	assert.Equal(t, "1", v, "the copy of the copy is unchanged")
	assert.Equal(t, resource.Finalizers{"f"}, *cc.Finalizers())
}

// TestMetadataOwnerOnlySharedBetweenResources: metadata whose only
// rarely used part is the same owner share one storage for it, and a
// change of one's labels, finalizers or owner leaves the others as they
// were.
func TestMetadataOwnerOnlySharedBetweenResources(t *testing.T) {
	a := resource.NewMetadata("ns", "T", "a", resource.VersionUndefined)
	b := resource.NewMetadata("ns", "T", "b", resource.VersionUndefined)
	require.NoError(t, a.SetOwner("ctrl"))
	require.NoError(t, b.SetOwner("ctrl"))
	assert.Zero(t, a.ApproxSize(), "the owner alone is shared")
	a.Labels().Set("l", "1")
	a.Finalizers().Add("f")
	assert.Equal(t, "ctrl", a.Owner())
	assert.Zero(t, b.Labels().Len())
	assert.Empty(t, *b.Finalizers())
	a.ReplaceOwner("other")
	assert.Equal(t, "ctrl", b.Owner())
	require.NoError(t, b.SetOwner(""))
	assert.Equal(t, "", b.Owner())
	assert.Error(t, a.SetOwner("third"), "an owner still never changes hands")
}

// TestS7_FrozenMetadataReadsConcurrently: any number of goroutines may
// read a frozen metadata with every accessor, the writable ones
// included, and copy it, whatever it holds (nothing, an owner alone,
// everything): reading attaches nothing to it (go test -race fails
// otherwise).
func TestS7_FrozenMetadataReadsConcurrently(t *testing.T) {
	bare := resource.NewMetadata("ns", "T", "bare", resource.NewVersion(1))
	owned := resource.NewMetadata("ns", "T", "owned", resource.NewVersion(1))
	owned.ReplaceOwner("ctrl")
	full := labelled("full")
	for _, md := range []*resource.Metadata{&bare, &owned, &full} {
		md.Freeze()
		want := md.Copy()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 100 {
					_, _ = md.Labels().Get("l")
					_ = md.Annotations().Len()
					_ = md.Finalizers().Has("f")
					_ = md.Owner() + md.String()
					c := md.Copy()
					c.Labels().Set("mine", "1")
					c.Finalizers().Add("mine")
					_ = md.Equal(want)
				}
			})
		}
		wg.Wait()
		assert.True(t, md.Equal(want), "%s unchanged", md.ID())
	}
}

// TestMetadataPhaseBeyond32Bits: a phase is kept in 32 bits; a value
// beyond them reads back as math.MinInt32, never as another valid phase.
func TestMetadataPhaseBeyond32Bits(t *testing.T) {
	md := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	md.SetPhase(resource.PhaseTearingDown)
	assert.Equal(t, resource.PhaseTearingDown, md.Phase())
	md.SetPhase(resource.Phase(1 << 33))
	assert.Equal(t, resource.Phase(math.MinInt32), md.Phase())
	md.SetPhase(resource.Phase(-1))
	assert.Equal(t, resource.Phase(-1), md.Phase())
}

// TestS7_ChangeThroughASnapshotNeverReachesAnotherResource: metadata of
// different resources that share their owner's storage (an owner and
// nothing else) never share anything a change can reach: a change made
// through a frozen one (a breach of rule S7) changes no other resource's,
// frozen or not.
func TestS7_ChangeThroughASnapshotNeverReachesAnotherResource(t *testing.T) {
	a := resource.NewMetadata("ns", "T", "a", resource.VersionUndefined)
	b := resource.NewMetadata("ns", "T", "b", resource.VersionUndefined)
	a.ReplaceOwner("ctrl")
	b.ReplaceOwner("ctrl")
	a.Freeze()
	b.Freeze()
	c := resource.NewMetadata("ns", "T", "c", resource.VersionUndefined)
	c.ReplaceOwner("ctrl")

	a.Labels().Set("l", "1")
	a.Annotations().Set("a", "1")
	a.Finalizers().Add("f")
	for _, md := range []*resource.Metadata{&b, &c} {
		assert.Zero(t, md.Labels().Len(), md.ID())
		assert.Zero(t, md.Annotations().Len(), md.ID())
		assert.Empty(t, *md.Finalizers(), md.ID())
		assert.Equal(t, "ctrl", md.Owner())
	}
}
