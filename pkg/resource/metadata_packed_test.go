package resource_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// packedPhases are phases with a code of their own (running, tearing
// down) and phases kept in the ext (any other 32-bit value).
var packedPhases = []resource.Phase{
	resource.PhaseRunning, resource.PhaseTearingDown,
	2, 3, 7, -1, math.MinInt32, math.MaxInt32,
}

// TestMetadataPhaseFlagsAndTimestampsShareNoBits: the phase, the frozen
// flag and the timestamps' nanoseconds, which share two words, read back
// as set whatever the others hold: every phase with the largest and the
// smallest nanoseconds, set in either order, through a copy, a CopyInto
// and a Freeze, and a timestamp or CopyStamps set after the phase.
func TestMetadataPhaseFlagsAndTimestampsShareNoBits(t *testing.T) {
	late := time.Unix(1_700_000_000, 999_999_999)
	early := time.Unix(-62135596800, 0) // the zero time's instant: sec 0, nsec 0
	for _, p := range packedPhases {
		for _, tm := range []time.Time{late, early, time.Unix(5, 1)} {
			md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(3))
			md.SetPhase(p)
			md.SetCreated(tm)
			md.SetUpdated(tm.Add(time.Nanosecond))
			check := func(md *resource.Metadata, frozen bool, what string) {
				t.Helper()
				require.Equal(t, p, md.Phase(), "%s: phase %d at %s", what, p, tm)
				require.True(t, md.Created().Equal(tm), "%s: created %s, want %s", what, md.Created(), tm)
				require.True(t, md.Updated().Equal(tm.Add(time.Nanosecond)), "%s: updated", what)
				require.Equal(t, frozen, md.Frozen(), what)
				_, hp, _ := md.Head()
				require.Equal(t, p, hp, "%s: Head's phase", what)
			}
			check(&md, false, "set")
			cp := md.Copy()
			check(&cp, false, "copy")
			md.Freeze()
			check(&md, true, "frozen")
			var into resource.Metadata
			md.CopyInto(&into)
			check(&into, false, "CopyInto of the frozen")
			require.True(t, into.Equal(md) && cp.Equal(md))

			// The timestamps set after the phase and the flag leave them.
			again := resource.NewMetadata("ns", "T", "id", resource.NewVersion(3))
			again.Freeze()
			again = again.Copy()
			again.SetPhase(p)
			src := md.Copy() // the stamps of another phase, frozen
			src.SetPhase(resource.PhaseTearingDown - min(p, 1))
			src.Freeze()
			again.CopyStamps(&src)
			check(&again, false, "CopyStamps after the phase")
			again.Freeze()
			again.SetCreated(tm)
			again.SetUpdated(tm.Add(time.Nanosecond))
			check(&again, true, "timestamps set on a frozen one")
		}
	}
}

// TestMetadataPhaseInTheExtIsTheMetadatas: a phase kept in the ext (one
// no state accepts) belongs to its metadata alone: it survives a change
// of owner, labels or finalizers, a copy's change of phase never shows
// in the metadata it was copied from nor in a resource sharing its
// owner, a snapshot's change of phase (a breach of rule S7) never reaches
// the copies sharing its storage, and a stale one left in the ext once
// the phase has a code again is no part of Equal.
func TestMetadataPhaseInTheExtIsTheMetadatas(t *testing.T) {
	md := resource.NewMetadata("ns", "T", "a", resource.VersionUndefined)
	other := resource.NewMetadata("ns", "T", "b", resource.VersionUndefined)
	md.ReplaceOwner("ctrl")
	other.ReplaceOwner("ctrl") // both share the interned owner's storage
	md.SetPhase(7)
	assert.Equal(t, resource.Phase(7), md.Phase())
	assert.Equal(t, resource.PhaseRunning, other.Phase(), "the owner's storage is not written")
	md.ReplaceOwner("")
	md.ReplaceOwner("ctrl2")
	assert.Equal(t, resource.Phase(7), md.Phase(), "a change of owner keeps the phase")
	assert.Equal(t, "ctrl2", md.Owner())
	md.Labels().Set("l", "1")
	md.Finalizers().Add("f")
	assert.Equal(t, resource.Phase(7), md.Phase())

	md.Freeze()
	cp := md.Copy()
	cp.SetPhase(8)
	assert.Equal(t, resource.Phase(7), md.Phase(), "a copy's phase is its own")
	assert.Equal(t, resource.Phase(8), cp.Phase())
	shared := md.Copy()
	md.SetPhase(9) // a breach of S7
	assert.Equal(t, resource.Phase(7), shared.Phase(), "a snapshot's breach reaches no copy")
	assert.Equal(t, resource.Phase(9), md.Phase())
	assert.False(t, md.Equal(shared), "the breach shows")

	a := resource.NewMetadata("ns", "T", "a", resource.VersionUndefined)
	b := a.Copy()
	a.SetPhase(5)
	assert.False(t, a.Equal(b))
	b.SetPhase(6)
	assert.False(t, a.Equal(b), "phases kept in the ext are compared")
	a.SetPhase(resource.PhaseTearingDown)
	b.SetPhase(resource.PhaseTearingDown)
	assert.True(t, a.Equal(b), "a phase left in the ext is stale once the phase has a code")
	c := resource.NewMetadata("ns", "T", "a", resource.VersionUndefined)
	c.SetPhase(resource.PhaseTearingDown)
	assert.True(t, a.Equal(c) && c.Equal(a))
}
