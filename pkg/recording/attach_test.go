package recording_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestRC10_AnAttachedRecorderMissesNothingFromAttachOn: a recorder attached
// before the Runtime runs records every change from Attach on: a write
// made between Attach and the Runtime's Run (a daemon's intent) and the
// controller's first pass (the echoer's echo, written before the
// recorder's own Run even starts) are changes of the recording, not
// folded into its starting state, which is the state at Attach; the
// changes after the Runtime listed its kinds come through its watches.
func TestRC10_AnAttachedRecorderMissesNothingFromAttachOn(t *testing.T) {
	mem := inmem.NewState()
	st := &liveWatches{State: mem, RevisionReporter: mem.(state.RevisionReporter), live: map[string]int{}}
	t.Cleanup(st.wg.Wait) // after the recorder's Run returned (cleanups run last first)
	rt, err := runtime.New(st.State, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(pingPong[*Note, *Echo]{name: "echoer", newO: func() *Echo {
		return typed.NewDefault[NoteSpec, EchoDef]("x", NoteSpec{})
	}}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, st.Create(ctx, newNote("x", 1)))
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	require.NoError(t, rec.Attach(ctx))
	assert.Equal(t, map[string]int{echoKind.Type(): 1, noteKind.Type(): 1}, st.count(), "the recorder watches every kind until the Runtime runs")
	require.ErrorIs(t, rec.Attach(ctx), runtime.ErrTapped, "once")
	require.NoError(t, st.Create(ctx, newNote("intent", 2)))

	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	eventually(t, "the echoer's first pass wrote its echo", func() bool {
		_, err := st.Get(ctx, resource.NewPointer(ns, echoKind.Type(), "x"))
		return err == nil
	})
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("after", 3)))
	r := settled(t, rec, st, echoKind, noteKind)
	require.Len(t, r.Initial, 1, "the starting state is the state at Attach")
	assert.Equal(t, "x", r.Initial[0].Metadata().ID())
	assert.Equal(t, []string{
		"Notes.test.resgraph.dev(rec/intent) outside create ",
		"Echoes.test.resgraph.dev(rec/x) controller create echoer",
		"Notes.test.resgraph.dev(rec/after) outside create ",
	}, changeOps(r))
	eventually(t, "the recorder handed the notes over to the Runtime's watch", func() bool {
		return st.count()[noteKind.Type()] == 0
	})
	assert.Equal(t, 1, st.count()[echoKind.Type()], "it watches the output no controller reads")

	_, err = recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	late, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	assert.ErrorIs(t, late.Attach(ctx), runtime.ErrRunning, "a Runtime that runs lists no more")
}

func changeOps(r *recording.Recording) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, fmt.Sprintf("%s %s %s %s", c.Pointer, c.By, c.Op, c.Writer))
	}
	return out
}

// liveWatches is a state that counts the watches of each kind that are
// live (their context not done).
type liveWatches struct {
	state.State
	state.RevisionReporter
	mu   sync.Mutex
	live map[string]int
	wg   sync.WaitGroup
}

func (s *liveWatches) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if err := s.State.WatchKindAggregated(ctx, k, ch, opts...); err != nil {
		return err
	}
	s.mu.Lock()
	s.live[k.Type()]++
	s.mu.Unlock()
	s.wg.Go(func() {
		<-ctx.Done()
		s.mu.Lock()
		s.live[k.Type()]--
		s.mu.Unlock()
	})
	return nil
}

func (s *liveWatches) count() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.live)
}
