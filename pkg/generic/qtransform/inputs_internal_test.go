package qtransform

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestIndex_ClaimRetireAndForget: an input's output is claimed once and
// known from then on; mapping to another output retires the previous one
// (returned, to destroy) until it is forgotten, or claimed again; the
// input of every output is known. Claiming the output an input already has,
// and listing an input's outputs into the caller's buffer, allocate nothing.
func TestInputs_ClaimRetireAndForget(t *testing.T) {
	x := newInputs()
	all := func(in resource.ID) []resource.ID { return x.all(in, nil) }

	known, retired := x.claim("a", "oa")
	assert.False(t, known)
	assert.Empty(t, retired)
	known, retired = x.claim("a", "oa")
	assert.True(t, known)
	assert.Empty(t, retired)
	assert.Equal(t, []resource.ID{"oa"}, all("a"))

	_, retired = x.claim("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, retired, "the previous output is retired")
	assert.Equal(t, []resource.ID{"ob", "oa"}, all("a"))
	for _, out := range []resource.ID{"oa", "ob"} {
		in, ok := x.input(out)
		assert.True(t, ok)
		assert.Equal(t, resource.ID("a"), in)
	}
	_, retired = x.claim("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, retired, "still retired until forgotten")

	_, retired = x.claim("a", "oa")
	assert.Equal(t, []resource.ID{"ob"}, retired, "claimed again: oa is the output, ob retired")
	assert.Equal(t, []resource.ID{"oa", "ob"}, all("a"))
	x.forget("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, all("a"))
	_, ok := x.input("ob")
	assert.False(t, ok)

	// Another input claiming the same output takes it; claiming it back
	// gives it back.
	x.claim("b", "oa")
	in, _ := x.input("oa")
	assert.Equal(t, resource.ID("b"), in)
	x.claim("a", "oa")
	in, _ = x.input("oa")
	assert.Equal(t, resource.ID("a"), in)

	x.forget("a", "oa")
	assert.Empty(t, all("a"))

	x.claim("c", "oc")
	var buf [1]resource.ID
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		x.claim("c", "oc")
		_ = x.all("c", buf[:0])
	}))
}

// TestInputs_ProcessedMarks: an input is skipped only at the creation time
// and version it was fully processed at, and not after a MapInput woke it
// up — also when the wake-up came while the Reconcile ran (its finish then
// records nothing); an input that is gone starts over.
func TestInputs_ProcessedMarks(t *testing.T) {
	x := newInputs()
	v1, v2 := resource.NewVersion(1), resource.NewVersion(2)
	gen, skip := x.start("a", 10, v1)
	assert.False(t, skip)
	x.finish("a", 10, v1, gen)
	_, skip = x.start("a", 10, v1)
	assert.True(t, skip, "processed at 10/v1")
	_, skip = x.start("a", 10, v2)
	assert.False(t, skip, "another version")
	_, skip = x.start("a", 11, v1)
	assert.False(t, skip, "created again")

	x.wake("a")
	gen, skip = x.start("a", 10, v1)
	assert.False(t, skip, "woken up")
	x.wake("a") // while that Reconcile runs
	x.finish("a", 10, v1, gen)
	_, skip = x.start("a", 10, v1)
	assert.False(t, skip, "a wake-up during the run: not recorded")

	x.gone("a")
	gen, _ = x.start("a", 10, v1)
	assert.Zero(t, gen, "gone: starts over")
}

// TestInputs_RecordGoesWithWhatItHolds: an input's record is kept while it
// has an output, a retired output or a mark, and goes with the last of
// them; the input of an output goes with the output.
func TestInputs_RecordGoesWithWhatItHolds(t *testing.T) {
	x := newInputs()
	gen, _ := x.start("a", 1, resource.NewVersion(1))
	x.claim("a", "o1")
	x.claim("a", "o2") // o1 retired
	x.finish("a", 1, resource.NewVersion(1), gen)
	x.gone("a")
	assert.Len(t, x.recs, 1, "outputs left")
	x.forget("a", "o2")
	assert.Len(t, x.recs, 1, "a retired output left")
	x.forget("a", "o1")
	assert.Empty(t, x.recs)
	assert.Empty(t, x.inputOf)

	x.wake("b")
	assert.Len(t, x.recs, 1, "a wake-up is kept")
	x.gone("b")
	assert.Empty(t, x.recs)
}

// TestInputs_ProcessedIsWhatStartSkips: an input is reported processed
// (for the Runtime's routing, rule Q1 extended) exactly when a Reconcile
// starting now would skip it: processed at its creation time and version,
// and not woken by MapInput since.
func TestInputs_ProcessedIsWhatStartSkips(t *testing.T) {
	x := newInputs()
	created := time.Unix(10, 0)
	md := func(created time.Time, v uint64) *resource.Metadata {
		m := resource.NewMetadata("ns", "As.test.resgraph.dev", "a", resource.NewVersion(v))
		m.SetCreated(created)
		return &m
	}
	assert.False(t, x.processed(md(created, 2)), "never processed")
	gen, _ := x.start("a", created.UnixNano(), resource.NewVersion(1))
	assert.False(t, x.processed(md(created, 2)), "being processed")
	x.finish("a", created.UnixNano(), resource.NewVersion(2), gen)
	for _, tc := range []struct {
		name string
		md   *resource.Metadata
		want bool
	}{
		{"the version processed", md(created, 2), true},
		{"another version", md(created, 3), false},
		{"created again", md(created.Add(time.Second), 2), false},
	} {
		_, skip := x.start("a", tc.md.Created().UnixNano(), tc.md.Version())
		assert.Equal(t, skip, x.processed(tc.md), tc.name+": as start says")
		assert.Equal(t, tc.want, x.processed(tc.md), tc.name)
	}
	x.wake("a")
	assert.False(t, x.processed(md(created, 2)), "woken by MapInput")
}
