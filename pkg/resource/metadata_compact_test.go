package resource_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestMetadataTimestampsKeepTheInstant: Created and Updated return the
// instant that was set, for every time.Time (zero, before 1970, the
// extremes of time.Time's range, with a monotonic reading, in any
// location), in UTC and without a monotonic reading; the zero time stays
// the zero time.
func TestMetadataTimestampsKeepTheInstant(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		paris = time.FixedZone("CET", 3600)
	}
	times := []time.Time{
		time.Now(), // with a monotonic reading
		time.Now().In(paris),
		time.Unix(0, 0),
		time.Unix(-5, 999_999_999),
		time.Unix(1_700_000_000, 123_456_789).In(time.FixedZone("X", -7*3600)),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), // one nanosecond after the zero time
		time.Date(1, 1, 1, 0, 0, 0, 0, paris),    // the zero instant in another location
		time.Unix(math.MaxInt64, 999_999_999),
		time.Unix(math.MinInt64, 0),
		time.Unix(math.MaxInt64-62135596800, 999_999_999), // the latest time.Time
		time.Unix(math.MinInt64+62135596800, 0),           // ... and the earliest
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		times = append(times, time.Unix(int64(rng.Uint64()), rng.Int64N(1e9)))
	}
	for _, tm := range times {
		md := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
		md.SetCreated(tm)
		md.SetUpdated(tm.Add(time.Nanosecond))
		c, u := md.Created(), md.Updated()
		require.True(t, c.Equal(tm), "created %s, set %s", c, tm)
		require.True(t, u.Equal(tm.Add(time.Nanosecond)), "updated %s, set %s", u, tm.Add(time.Nanosecond))
		require.Equal(t, time.UTC, c.Location(), "in UTC")
		require.Equal(t, c, c.Round(0), "no monotonic reading")
		cp := md.Copy()
		require.True(t, cp.Created().Equal(tm) && cp.Updated().Equal(u), "copies keep them")
	}

	zero := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	assert.Equal(t, time.Time{}, zero.Created(), "never set: the zero time")
	assert.Equal(t, time.Time{}, zero.Updated())
	zero.SetCreated(time.Time{}.In(paris))
	assert.True(t, zero.Created().IsZero(), "the zero instant in any location is the zero time")
	var empty resource.Metadata
	assert.True(t, empty.Created().IsZero() && empty.Updated().IsZero(), "zero Metadata")
}

// TestMetadataNamespaceAndType: the namespace and type read back as given
// for any number of kinds (more than the interning cache holds), from
// many goroutines at once; the zero Metadata has an empty namespace and
// type; metadata of different kinds are never Equal.
func TestMetadataNamespaceAndType(t *testing.T) {
	var empty resource.Metadata
	assert.Equal(t, "", empty.Namespace())
	assert.Equal(t, "", empty.Type())
	onlyID := resource.NewMetadata("", "", "id", resource.VersionUndefined)
	assert.Equal(t, "", onlyID.Namespace()+onlyID.Type())
	assert.True(t, empty.Equal(resource.Metadata{}))

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				ns, typ := fmt.Sprintf("ns%d", i%7), fmt.Sprintf("T%d.%d", i%300, g%2)
				md := resource.NewMetadata(ns, typ, "id", resource.VersionUndefined)
				gotNS, gotTyp, id := md.Identity()
				if md.Namespace() != ns || md.Type() != typ || gotNS != ns || gotTyp != typ || id != "id" {
					t.Errorf("NewMetadata(%q, %q) reads %q, %q", ns, typ, md.Namespace(), md.Type())
					return
				}
				other := resource.NewMetadata(ns+"x", typ, "id", resource.VersionUndefined)
				if md.Equal(other) || !md.Equal(resource.NewMetadata(ns, typ, "id", resource.VersionUndefined)) {
					t.Errorf("Equal of %q/%q is wrong", ns, typ)
					return
				}
			}
		})
	}
	wg.Wait()
	// Same type, namespaces swapped with the type: never confused.
	a := resource.NewMetadata("a", "b", "id", resource.VersionUndefined)
	b := resource.NewMetadata("b", "a", "id", resource.VersionUndefined)
	assert.False(t, a.Equal(b))
	assert.Equal(t, "b(a/id)", resource.PointerString(&a))
}

// TestMetadataCopyIntoSharesNothing: CopyInto copies every field and
// shares no finalizers, labels or annotations with the original; nil and
// empty stay as they were.
func TestMetadataCopyIntoSharesNothing(t *testing.T) {
	md := resource.NewMetadata("ns", "T", "id", resource.NewVersion(3))
	md.Finalizers().Add("f")
	md.Labels().Set("l", "1")
	md.Annotations().Set("a", "1")
	md.SetCreated(time.Unix(5, 6))
	require.NoError(t, md.SetOwner("o"))
	var c resource.Metadata
	md.CopyInto(&c)
	require.True(t, md.Equal(c))
	require.True(t, c.Created().Equal(time.Unix(5, 6)))
	c.Finalizers().Add("g")
	c.Labels().Set("l", "2")
	c.Annotations().Set("a", "2")
	assert.Equal(t, resource.Finalizers{"f"}, *md.Finalizers())
	v, _ := md.Labels().Get("l")
	w, _ := md.Annotations().Get("a")
	assert.Equal(t, "1"+"1", v+w, "the original is untouched")

	bare := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	*bare.Finalizers() = resource.Finalizers{}
	bare.CopyInto(&c)
	assert.NotNil(t, *c.Finalizers(), "empty stays empty")
	assert.Empty(t, *c.Finalizers())
	assert.Zero(t, c.Labels().Len())
}
