package resource_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// inPlaceTimes are creation and update times for the in-place readers'
// tests: the zero time, the zero instant in another location, times
// around the Unix epoch, the extremes of time.Time, random ones.
func inPlaceTimes() []time.Time {
	times := []time.Time{
		{},
		time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 3600)),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Unix(0, 0),
		time.Unix(-1, 999_999_999),
		time.Unix(1_700_000_000, 123_456_789),
		time.Unix(1_700_000_000, 123_456_790).In(time.FixedZone("Y", -7*3600)),
		time.Unix(math.MaxInt64-62135596800, 999_999_999),
		time.Unix(math.MinInt64+62135596800, 0),
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		times = append(times, time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)))
	}
	return times
}

// TestMetadataInPlaceReadersAgreeWithTheGetters: Head is (Version, Phase,
// Owner); IncarnationOf is "Created is zero or Equal to the stored one's";
// CopyStamps sets what SetVersion, SetCreated and SetUpdated of the
// other's getters set, and nothing else — for every pair of times.
func TestMetadataInPlaceReadersAgreeWithTheGetters(t *testing.T) {
	times := inPlaceTimes()
	for i, created := range times {
		for j, stored := range times {
			md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(uint64(i)))
			md.SetCreated(created)
			st := resource.NewMetadata("ns", "T", "id", resource.NewVersion(uint64(j)))
			st.SetCreated(stored)
			want := created.IsZero() || created.Equal(stored)
			require.Equal(t, want, md.IncarnationOf(&st), "created %s, stored %s", created, stored)
		}
	}

	md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(7))
	md.SetPhase(resource.PhaseTearingDown)
	require.NoError(t, md.SetOwner("ctrl"))
	ver, phase, owner := md.Head()
	require.Equal(t, md.Version(), ver)
	require.Equal(t, md.Phase(), phase)
	require.Equal(t, md.Owner(), owner)
	var empty resource.Metadata
	ver, phase, owner = empty.Head()
	require.Equal(t, resource.VersionUndefined, ver)
	require.Equal(t, resource.PhaseRunning, phase)
	require.Equal(t, resource.Owner(""), owner)

	for i, created := range times {
		updated := times[(i+1)%len(times)]
		from := resource.NewMetadata("a", "T", "from", resource.NewVersion(uint64(i+1)))
		from.SetCreated(created)
		from.SetUpdated(updated)
		require.NoError(t, from.SetOwner("o"))
		from.Labels().Set("l", "1")

		dst := resource.NewMetadata("b", "U", "dst", resource.NewVersion(99))
		dst.SetCreated(time.Unix(5, 5))
		dst.SetPhase(resource.PhaseTearingDown)
		dst.CopyStamps(&from)

		want := resource.NewMetadata("b", "U", "dst", resource.NewVersion(99))
		want.SetPhase(resource.PhaseTearingDown)
		want.SetVersion(from.Version())
		want.SetCreated(from.Created())
		want.SetUpdated(from.Updated())
		require.True(t, want.Equal(dst), "identity, phase, owner and labels untouched: %s", dst)
		require.Equal(t, want.Version(), dst.Version())
		require.True(t, dst.Created().Equal(want.Created()) && dst.Updated().Equal(want.Updated()),
			"created %s updated %s, want %s %s", dst.Created(), dst.Updated(), want.Created(), want.Updated())
		require.True(t, dst.IncarnationOf(&from), "stamps copied: the same incarnation")
	}
}

// TestPointerKeyIdentityIsItsParts: a PointerKey's Identity is its
// Namespace, Type and ID, for NewPointer, PointerOf and the zero key.
func TestPointerKeyIdentityIsItsParts(t *testing.T) {
	md := resource.NewMetadata("ns2", "T2", "id2", resource.VersionUndefined)
	for _, p := range []resource.PointerKey{
		resource.NewPointer("ns", "T", "id").(resource.PointerKey),
		resource.PointerOf(&md),
		{},
	} {
		ns, typ, id := p.Identity()
		require.Equal(t, p.Namespace(), ns)
		require.Equal(t, p.Type(), typ)
		require.Equal(t, p.ID(), id)
	}
}
