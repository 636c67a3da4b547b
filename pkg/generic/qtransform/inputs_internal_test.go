package qtransform

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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

	known, retired, _ := x.claim(0, "a", "oa")
	assert.False(t, known)
	assert.Empty(t, retired)
	known, retired, _ = x.claim(0, "a", "oa")
	assert.True(t, known)
	assert.Empty(t, retired)
	assert.Equal(t, []resource.ID{"oa"}, all("a"))

	_, retired, _ = x.claim(0, "a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, retired, "the previous output is retired")
	assert.Equal(t, []resource.ID{"ob", "oa"}, all("a"))
	for _, out := range []resource.ID{"oa", "ob"} {
		in, ok := x.input(out)
		assert.True(t, ok)
		assert.Equal(t, resource.ID("a"), in)
	}
	_, retired, _ = x.claim(0, "a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, retired, "still retired until forgotten")

	_, retired, _ = x.claim(0, "a", "oa")
	assert.Equal(t, []resource.ID{"ob"}, retired, "claimed again: oa is the output, ob retired")
	assert.Equal(t, []resource.ID{"oa", "ob"}, all("a"))
	x.forget("a", "ob")
	assert.Equal(t, []resource.ID{"oa"}, all("a"))
	_, ok := x.input("ob")
	assert.False(t, ok)

	// Another input claiming the same output takes it; claiming it back
	// gives it back.
	x.claim(0, "b", "oa")
	in, _ := x.input("oa")
	assert.Equal(t, resource.ID("b"), in)
	x.claim(0, "a", "oa")
	in, _ = x.input("oa")
	assert.Equal(t, resource.ID("a"), in)

	x.forget("a", "oa")
	assert.Empty(t, all("a"))

	x.claim(0, "c", "oc")
	var buf [1]resource.ID
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		x.claim(0, "c", "oc")
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
	gen, skip, _ := x.start("a", 10, v1)
	assert.False(t, skip)
	x.finish(0, "a", 10, v1, gen)
	_, skip, _ = x.start("a", 10, v1)
	assert.True(t, skip, "processed at 10/v1")
	_, skip, _ = x.start("a", 10, v2)
	assert.False(t, skip, "another version")
	_, skip, _ = x.start("a", 11, v1)
	assert.False(t, skip, "created again")

	x.wake("a")
	gen, skip, _ = x.start("a", 10, v1)
	assert.False(t, skip, "woken up")
	x.wake("a") // while that Reconcile runs
	x.finish(0, "a", 10, v1, gen)
	_, skip, _ = x.start("a", 10, v1)
	assert.False(t, skip, "a wake-up during the run: not recorded")

	x.gone("a")
	gen, _, _ = x.start("a", 10, v1)
	assert.Zero(t, gen, "gone: starts over")
}

// TestInputs_RecordGoesWithWhatItHolds: an input's record is kept while it
// has an output, a retired output or a mark, and goes with the last of
// them; the input of an output goes with the output.
func TestInputs_RecordGoesWithWhatItHolds(t *testing.T) {
	x := newInputs()
	gen, _, _ := x.start("a", 1, resource.NewVersion(1))
	x.claim(0, "a", "o1")
	x.claim(0, "a", "o2") // o1 retired
	x.finish(0, "a", 1, resource.NewVersion(1), gen)
	x.gone("a")
	assert.Len(t, x.slots, 1, "outputs left")
	x.forget("a", "o2")
	assert.Len(t, x.slots, 1, "a retired output left")
	x.forget("a", "o1")
	assert.Empty(t, x.slots)
	assert.Empty(t, x.inputOf)

	x.wake("b")
	assert.Len(t, x.slots, 1, "a wake-up is kept")
	x.gone("b")
	assert.Empty(t, x.slots)
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
	gen, _, _ := x.start("a", created.UnixNano(), resource.NewVersion(1))
	assert.False(t, x.processed(md(created, 2)), "being processed")
	x.finish(0, "a", created.UnixNano(), resource.NewVersion(2), gen)
	for _, tc := range []struct {
		name string
		md   *resource.Metadata
		want bool
	}{
		{"the version processed", md(created, 2), true},
		{"another version", md(created, 3), false},
		{"created again", md(created.Add(time.Second), 2), false},
	} {
		_, skip, _ := x.start("a", tc.md.Created().UnixNano(), tc.md.Version())
		assert.Equal(t, skip, x.processed(tc.md), tc.name+": as start says")
		assert.Equal(t, tc.want, x.processed(tc.md), tc.name)
	}
	x.wake("a")
	assert.False(t, x.processed(md(created, 2)), "woken by MapInput")
}

// TestInputs_AReconcileFindsItsInputOnce: the three steps of a Reconcile
// of an input the controller knows (start, claim, finish) look the input
// up once: start tells the others where its record is.
func TestInputs_AReconcileFindsItsInputOnce(t *testing.T) {
	x := newInputs()
	lookups := 0
	x.lookups = &lookups
	v1 := resource.NewVersion(1)
	for i := range 3 {
		lookups = 0
		gen, _, at := x.start("a", 10, v1)
		_, _, at = x.claim(at, "a", "oa")
		x.finish(at, "a", 10, v1.Next(), gen)
		if i == 0 {
			continue // unknown at its start: claim and finish look it up
		}
		assert.Equal(t, 1, lookups, "run %d", i)
	}
}

// TestInputs_AStaleRefFindsItsInputOrNone: a step handed where the record
// was finds the input's record anew once the record went and its slot is
// another input's: it never writes into the other input's record.
func TestInputs_AStaleRefFindsItsInputOrNone(t *testing.T) {
	x := newInputs()
	v1 := resource.NewVersion(1)
	x.wake("a")
	gen, _, at := x.start("a", 10, v1)
	require.NotZero(t, at)
	x.gone("a") // a's record goes: it held only a mark
	require.Empty(t, x.slots)
	x.wake("b") // b takes the slot a had
	require.Len(t, x.recs, 1)

	x.finish(at, "a", 10, v1, gen)
	_, skip, _ := x.start("b", 10, v1)
	assert.False(t, skip, "b is not marked processed")
	assert.Equal(t, uint64(1), x.recs[x.slots["b"]].mark.gen, "b keeps its wake-up")
	_, skip, _ = x.start("a", 10, v1)
	assert.False(t, skip, "a was woken (gen 1) before the start: nothing recorded")

	gen, _, at = x.start("c", 10, v1) // c has no record: at is none
	assert.Zero(t, at)
	_, _, at = x.claim(at, "c", "oc")
	x.finish(at, "c", 10, v1, gen)
	_, skip, _ = x.start("c", 10, v1)
	assert.True(t, skip, "c processed")
}
