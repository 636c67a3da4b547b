package inmem

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// holder is a state.SnapshotHolder that keeps the reports it is given.
type holder struct {
	name string
	// takes says whether it takes reports on (a running holder).
	takes bool
	mu    sync.Mutex
	got   []error
}

func (h *holder) HolderName() string { return h.name }

func (h *holder) SnapshotChanged(err error) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.takes {
		h.got = append(h.got, err)
	}
	return h.takes
}

func (h *holder) reports(t *testing.T) []*MutationError {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*MutationError
	for _, err := range h.got {
		var me *MutationError
		require.ErrorAs(t, err, &me)
		out = append(out, me)
	}
	h.got = nil
	return out
}

func tracker(t *testing.T, st state.State) state.SnapshotTracker {
	t.Helper()
	tr, ok := st.(state.SnapshotTracker)
	require.True(t, ok)
	require.True(t, tr.TracksSnapshots())
	return tr
}

// TestS7_DetectorGivesTheReportToTheHolders: a snapshot handed to
// holders (HandedTo) and changed is reported, when its resource is next
// written, naming the holders in the order they got it, and the report
// goes to the first holder that takes it on, not to the state's report
// (which the writer would run); when no holder takes it, the state's
// report runs, still naming them.
func TestS7_DetectorGivesTheReportToTheHolders(t *testing.T) {
	st, rep := detectorState(t)
	tr := tracker(t, st)
	ctx := t.Context()
	stopped, running := &holder{name: "stopped"}, &holder{name: "running", takes: true}
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	snap := getRO(t, st, "a")
	tr.HandedTo(stopped, snap)
	tr.HandedTo(running, snap)
	tr.HandedTo(running, snap) // once is enough
	snap.(*pair).TypedSpec().A = 100

	mustUpdate(t, ctx, st, "a", 2)
	assert.Empty(t, rep.take(t), "the writer does not raise it")
	got := running.reports(t)
	require.Len(t, got, 1)
	assert.Equal(t, []string{"stopped", "running"}, got[0].Holders)
	assert.Equal(t, "spec.A", got[0].Path)
	assert.Contains(t, got[0].Error(), "handed to stopped, running")

	// Nobody takes it on: the state raises it.
	require.NoError(t, st.Create(ctx, newPair("b", 1)))
	snapB, err := st.Get(ctx, ptr("b"), state.WithReadOnlyGet())
	require.NoError(t, err)
	tr.HandedTo(stopped, snapB)
	snapB.(*pair).TypedSpec().B = 7
	require.NoError(t, st.Destroy(ctx, ptr("b")))
	byState := rep.take(t)
	require.Len(t, byState, 1)
	assert.Equal(t, []string{"stopped"}, byState[0].Holders)
	assert.Empty(t, stopped.reports(t))
}

// TestS7_DetectorChecksWhatWasHanded: CheckHanded compares snapshots
// handed to a holder now, the current version and the one before it, and
// returns their changes naming that holder first; a change is reported
// once, whoever finds it; resources that are not watched snapshots (a
// private copy, a version long replaced) are ignored.
func TestS7_DetectorChecksWhatWasHanded(t *testing.T) {
	st, rep := detectorState(t)
	tr := tracker(t, st)
	ctx := t.Context()
	first, second := &holder{name: "first", takes: true}, &holder{name: "second", takes: true}
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	v1 := getRO(t, st, "a")
	tr.HandedTo(first, v1)
	mustUpdate(t, ctx, st, "a", 2) // v1 is now the one before
	v2 := getRO(t, st, "a")
	copied, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)

	assert.Empty(t, tr.CheckHanded(second, v1, v2, copied), "nothing changed")
	v1.(*pair).TypedSpec().A = -1
	v2.Metadata().Labels().Set("k", "v")
	copied.(*pair).TypedSpec().A = 50 // a private copy: not a snapshot
	errs := tr.CheckHanded(second, v1, v2, copied, v2)
	require.Len(t, errs, 2)
	var me1, me2 *MutationError
	require.ErrorAs(t, errs[0], &me1)
	require.ErrorAs(t, errs[1], &me2)
	assert.Equal(t, uint64(1), me1.Version.Value())
	assert.Equal(t, []string{"second", "first"}, me1.Holders)
	assert.Equal(t, "metadata.labels", me2.Path)
	assert.Equal(t, []string{"second"}, me2.Holders)

	assert.Empty(t, tr.CheckHanded(first, v1, v2), "reported once")
	mustUpdate(t, ctx, st, "a", 3)
	mustUpdate(t, ctx, st, "a", 4)
	assert.Empty(t, rep.take(t), "not again by the writer")
	assert.Empty(t, first.reports(t))
	assert.Empty(t, tr.CheckHanded(first, v1), "v1 is no longer watched")

	var raised []error
	st2 := NewState(WithMutationDetector(func(err error) { raised = append(raised, err) }))
	st2.(state.SnapshotTracker).ReportChange(errs[0])
	assert.Equal(t, errs[:1], raised, "ReportChange is the detector's report")
}

// TestS7_UntrackedStates: a state without the detector tracks nothing.
func TestS7_UntrackedStates(t *testing.T) {
	st := NewState(withoutMutationDetector())
	tr, ok := st.(state.SnapshotTracker)
	require.True(t, ok)
	assert.False(t, tr.TracksSnapshots())
	ctx := t.Context()
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	snap := getRO(t, st, "a")
	h := &holder{name: "h", takes: true}
	tr.HandedTo(h, snap)
	snap.(*pair).TypedSpec().A = 5
	assert.Empty(t, tr.CheckHanded(h, snap))
	tr.ReportChange(assert.AnError) // nothing to report with
	var nothing resource.Resource
	tr.HandedTo(h, nothing)
}

// TestS7_DetectorTracksTheDestroyedVersion: the last version of a
// destroyed resource (what the Runtime hands a QController's MapInput) is
// a watched snapshot until the destroy leaves the history: handed and
// changed, CheckHanded finds it; then the state forgets the resource (and
// a resource created again after its destroy is watched afresh).
func TestS7_DetectorTracksTheDestroyedVersion(t *testing.T) {
	rep := &reports{}
	c := newCore(WithHistoryCapacity(4), WithMutationDetector(rep.report))
	st := state.WrapCore(c)
	tr := tracker(t, st)
	ctx := t.Context()
	h := &holder{name: "mapper", takes: true}
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	last := getRO(t, st, "a")
	require.NoError(t, st.Destroy(ctx, ptr("a")))
	tr.HandedTo(h, last)
	last.(*pair).TypedSpec().A = 9
	errs := tr.CheckHanded(h, last)
	require.Len(t, errs, 1)
	var me *MutationError
	require.ErrorAs(t, errs[0], &me)
	assert.Equal(t, []string{"mapper"}, me.Holders)

	require.NoError(t, st.Create(ctx, newPair("a", 2))) // created again
	v := getRO(t, st, "a")
	v.(*pair).TypedSpec().A = 10
	assert.Len(t, tr.CheckHanded(h, v), 1, "the new incarnation is watched")

	require.NoError(t, st.Destroy(ctx, ptr("a")))
	for _, id := range []string{"x", "y", "z", "w", "v"} {
		require.NoError(t, st.Create(ctx, newPair(id, 0)))
	}
	assert.Empty(t, tr.CheckHanded(h, v), "the destroy left the history")
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	ks.mu.Lock()
	_, kept := ks.det.cur["a"]
	ks.mu.Unlock()
	assert.False(t, kept, "forgotten")
	assert.Empty(t, rep.take(t))
}
