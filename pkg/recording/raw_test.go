package recording

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// listingAt is a listing of one kind holding rs, at revision rev.
func listingAt(rev uint64, rs ...resource.Resource) *listing {
	s := startState{kindRev: map[resource.KindKey]uint64{resource.KindOf(wsKind): rev}, rev: rev}
	s.base = rs
	return newListing(s, time.Now(), 0, domains{})
}

// TestRC3_AListingLetsGoOfTheChangesItHolds: the window keeps the changes
// as they came from its start on; once a newer listing becomes its start,
// the changes that listing holds leave, and a recording starts at that
// listing (its resources, then the changes after it).
func TestRC3_AListingLetsGoOfTheChangesItHolds(t *testing.T) {
	controllers := owners{names: map[string]bool{}}
	w := newRawWindow(time.Hour, 1<<30, make(chan struct{}, 1), &controllers, &sizer{reg: codec.NewRegistry()})
	w.reset(listingAt(0))
	update := func(rev uint64) {
		op := committedUpdate
		if rev == 1 {
			op = committedCreate
		}
		w.addOne(at("a", rev), rev, op, time.Now().UnixNano(), 100)
	}
	for rev := uint64(1); rev <= 100; rev++ {
		update(rev)
	}
	w.install(listingAt(100, at("a", 100)))
	assert.Equal(t, 100, changesOf(w), "the window still starts at its first listing")
	for rev := uint64(101); rev <= 150; rev++ {
		update(rev)
	}
	w.install(listingAt(150, at("a", 150)))
	assert.Equal(t, 50, changesOf(w), "the changes the window's new start holds left")
	assert.Equal(t, int64(50*100), w.bytes)

	v := w.view(nil, time.Now())
	require.Len(t, v.initial, 1)
	assert.Equal(t, uint64(100), v.initial[0].Metadata().Version().Value(), "the recording starts at the listing")
	require.Len(t, v.entries, 50)
	assert.Equal(t, uint64(101), v.entries[0].ver)
	require.Len(t, v.final, 1)
	assert.Equal(t, uint64(150), v.final[0].Metadata().Version().Value())
}

// TestRC3_ARecordersWindowListsTheStateAsItFills: a recorder whose window
// fills many times over lists the state as it fills and holds the
// changes since the listing before the newest, not every change it saw.
func TestRC3_ARecordersWindowListsTheStateAsItFills(t *testing.T) {
	st := inmem.NewState()
	rec, err := New(st, codec.NewRegistry(), WithKinds(wsKind), WithWindow(time.Hour, 64*entryOverhead))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	<-rec.Started()

	const step, steps = 64, 16 // each step's changes are more than half the window
	for s := range steps {
		for i := range step {
			require.NoError(t, st.Create(ctx, atOf(fmt.Sprint("r", s*step+i), 0)))
		}
		require.NoError(t, rec.Sync(ctx))
		waitListed(t, rec)
	}
	rec.mu.Lock()
	held := changesOf(rec.raw)
	rec.mu.Unlock()
	assert.LessOrEqual(t, held, 2*step, "the window holds the changes since the listing before the newest, of %d", steps*step)
}

// waitListed waits until the recorder has no listing due (the changes
// since its newest are less than half its window).
func waitListed(t *testing.T, rec *Recorder) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rec.mu.Lock()
		due := rec.raw.dueSent
		rec.mu.Unlock()
		if !due {
			return
		}
		require.True(t, time.Now().Before(deadline), "the listing due was not taken")
		time.Sleep(time.Millisecond)
	}
}

// changesOf returns how many changes w holds.
func changesOf(w *rawWindow) int {
	n := len(w.worlds)
	for _, seg := range w.segs {
		n += seg.len()
	}
	return n
}

// TestRC3_ARecorderOfControllersClassifiesEachChangeAsItComes: a recorder
// of controllers keeps no resource of their changes (it classifies each
// change as it comes); a recorder of outside writers alone holds its
// changes as they came.
func TestRC3_ARecorderOfControllersClassifiesEachChangeAsItComes(t *testing.T) {
	for _, controllers := range [][]string{nil, {"echoer"}} {
		rec, err := New(inmem.NewState(), codec.NewRegistry(), WithKinds(wsKind), WithControllers(controllers...))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- rec.Run(ctx) }()
		<-rec.Started()
		rec.mu.Lock()
		raw := rec.win == history(rec.raw)
		rec.mu.Unlock()
		cancel()
		require.NoError(t, <-done)
		assert.Equal(t, controllers == nil, raw, "controllers %v", controllers)
	}
}

// TestRC3_ARecorderOfControllersLetsItsStartingListGo: a recorder that
// classifies each change as it comes over a state that does not number
// its changes holds its starting state in its window alone: it does not
// keep the list it read it from (which would hold each listed version
// for as long as the session runs). Over one that numbers them (inmem),
// its window's start is that listing (a lean window: no state now).
func TestRC3_ARecorderOfControllersLetsItsStartingListGo(t *testing.T) {
	for _, hide := range []bool{true, false} {
		mem := inmem.NewState()
		st := mem
		if hide {
			st = struct{ state.State }{mem} // no RevisionReporter
		}
		ctx, cancel := context.WithCancel(context.Background())
		for i := range 3 {
			require.NoError(t, st.Create(ctx, atOf(fmt.Sprint("r", i), 0)))
		}
		rec, err := New(st, codec.NewRegistry(), WithKinds(wsKind), WithControllers("echoer"))
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- rec.Run(ctx) }()
		<-rec.Started()
		rec.mu.Lock()
		if hide {
			require.Equal(t, history(rec.cls), rec.win)
			assert.Len(t, rec.cls.w.cur.flat(), 3, "the window holds the starting state")
			assert.Nil(t, rec.cls.start.base, "the history's listing")
		} else {
			require.Equal(t, history(rec.lean), rec.win)
			assert.Len(t, rec.lean.prev.state(), 3, "the window's start is the listing")
		}
		assert.Nil(t, rec.src.start.base, "the session's listing")
		rec.mu.Unlock()
		cancel()
		require.NoError(t, <-done)
	}
}
