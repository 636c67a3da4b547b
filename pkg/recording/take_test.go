package recording_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// folded returns the versions of the recording's starting state with
// its changes applied in order: each resource's pointer and version.
func folded(r *recording.Recording) map[resource.PointerKey]uint64 {
	out := map[resource.PointerKey]uint64{}
	for _, res := range r.Initial {
		out[resource.PointerOf(res.Metadata())] = res.Metadata().Version().Value()
	}
	for _, c := range r.Changes {
		switch {
		case c.By == recording.ByWorld:
		case c.Op == recording.OpDestroy:
			delete(out, c.Pointer)
		default:
			out[c.Pointer] = c.Version
		}
	}
	return out
}

// finalVersions returns each resource of the recording's final state and
// its version.
func finalVersions(r *recording.Recording) map[resource.PointerKey]uint64 {
	out := map[resource.PointerKey]uint64{}
	for _, res := range r.Final {
		out[resource.PointerOf(res.Metadata())] = res.Metadata().Version().Value()
	}
	return out
}

// TestRC3_ATakeWaitsForItsLaggingKindsUpToItsCut: a take of a recorder
// of controllers over a state that numbers its changes lists every kind
// at its cut and waits for every kind's changes up to it. While the
// watch of notes holds a note's change the take fails, typed (a
// *CatchUpError naming the notes), rather than return a recording whose
// final state holds a change its changes lack; once the change comes,
// the take's final state is its starting state with its changes applied.
func TestRC3_ATakeWaitsForItsLaggingKindsUpToItsCut(t *testing.T) {
	st := &gatedState{State: inmem.NewState(), kind: noteKind, gate: make(chan struct{})}
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind, echoKind), recording.WithControllers("echoer"),
		recording.WithOwnWatches(), recording.WithTakeWait(50*time.Millisecond))
	require.NoError(t, err)
	started(t, rec)
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, newNote("first", 1)))
	require.NoError(t, rec.Sync(ctx))

	st.hold.Store(true)
	require.NoError(t, st.Create(ctx, newNote("held", 2)))
	require.NoError(t, st.Create(ctx, typed.NewDefault[NoteSpec, EchoDef]("after", NoteSpec{N: 2})))
	_, err = rec.Take()
	var behind *recording.CatchUpError
	require.ErrorAs(t, err, &behind, "the note's change did not come")
	assert.Equal(t, []string{resource.KindString(noteKind)}, behind.Kinds)

	close(st.gate)
	r, err := rec.Take()
	require.NoError(t, err)
	assert.True(t, holds(r, noteKind, "held"))
	assert.Empty(t, lost(r), "the final state is the starting state with the changes applied")
	assert.Len(t, r.Changes, 3)
}

// TestRC3_ARollUnderWritesLosesNothing: a recorder of controllers whose
// window is small lists the state again and again (each listing its
// next start) while an outside writer and a controller's writes go on
// in two kinds: every take's changes are every change after its start,
// each revision once and in order, and its final state is its start
// with them applied.
func TestRC3_ARollUnderWritesLosesNothing(t *testing.T) {
	st := inmem.NewState()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind, echoKind), recording.WithControllers("echoer"),
		recording.WithWindow(0, 16<<10))
	require.NoError(t, err)
	started(t, rec)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil && werr == nil; i++ {
			if werr = createOne(ctx, st, i); werr == nil && i%100 == 99 {
				werr = rec.Sync(ctx) // the commit logs stay within their bound
			}
		}
	}()
	starts := map[uint64]bool{}
	eventually(t, "the window's start moved three times under writes", func() bool {
		r, err := rec.Take()
		if err == nil {
			starts[r.Revision] = true
			require.Empty(t, lost(r))
		}
		return len(starts) > 3
	})
	stop()
	wg.Wait()
	if !errors.Is(werr, context.Canceled) {
		require.NoError(t, werr)
	}
	require.NoError(t, rec.Sync(context.Background()))
	r, err := rec.Take()
	require.NoError(t, err)
	require.Empty(t, lost(r))
}

// createOne creates the ith resource: a note (an outside writer's) or
// an echo of the controller's.
func createOne(ctx context.Context, st state.State, i int) error {
	if i%2 == 0 {
		return st.Create(ctx, newNote(fmtID(i), i))
	}
	e := typed.NewDefault[NoteSpec, EchoDef](fmtID(i), NoteSpec{N: i})
	if err := e.Metadata().SetOwner("echoer"); err != nil {
		return err
	}
	return st.Create(ctx, e)
}

// lost says what of the state the recording lost: a revision after its
// start without a change, one twice, or a resource whose version in its
// final state is not its start's with the changes applied.
func lost(r *recording.Recording) string {
	rev := r.Revision
	for _, c := range r.Changes {
		if rev++; c.Revision != rev {
			return fmt.Sprintf("after revision %d the next change is at %d", rev-1, c.Revision)
		}
	}
	want, got := finalVersions(r), folded(r)
	for k, v := range want {
		if got[k] != v {
			return fmt.Sprintf("%v: version %d in the final state, %d folded (%d resources, %d folded)", k, v, got[k], len(want), len(got))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d resources folded, %d in the final state", len(got), len(want))
	}
	return ""
}

func fmtID(i int) string { return "n" + strconv.Itoa(i) }

// TestRC3_ARuntimeThatStoppedEndsTheWaitForItsKinds: when the Runtime
// a recorder taps stops first, a change of a tapped kind made after it
// never reaches the recorder; the session's final listing at its end
// holds it. That final take fails at once, typed (a *CatchUpError naming
// the kind), rather than wait for a change that cannot come: the
// recorder's Run returns as soon as its context is done, however long
// its take wait.
func TestRC3_ARuntimeThatStoppedEndsTheWaitForItsKinds(t *testing.T) {
	st := inmem.NewState()
	rt, err := runtime.New(st, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(pingPong[*Note, *Echo]{name: "echoer", newO: func() *Echo {
		return typed.NewDefault[NoteSpec, EchoDef]("x", NoteSpec{})
	}}))
	rtCtx, stopRuntime := context.WithCancel(context.Background())
	rtDone := make(chan error, 1)
	go func() { rtDone <- rt.Run(rtCtx) }()
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt), recording.WithTakeWait(time.Hour))
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	defer func() {
		stop()
		stopRuntime()
	}()
	select {
	case <-rec.Started():
	case <-time.After(30 * time.Second):
		t.Fatal("the recorder did not start")
	}
	require.NoError(t, st.Create(ctx, newNote("x", 1)))
	require.NoError(t, rec.Sync(ctx))

	stopRuntime()
	require.NoError(t, <-rtDone)
	require.NoError(t, st.Create(ctx, newNote("after", 2))) // no watch of the Runtime hands it over
	stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the recorder's Run waits for a change of a stopped Runtime's watch")
	}
	_, err = rec.Take()
	var behind *recording.CatchUpError
	require.ErrorAs(t, err, &behind)
	assert.Equal(t, []string{resource.KindString(noteKind)}, behind.Kinds)
}
