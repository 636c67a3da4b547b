package recording_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestRC1_SyncWaitsForEachKindsOwnChanges: the kinds' watches are
// separate, so a newer change of one kind in the window says nothing of
// another kind's older change still on its way. While the watch of notes
// holds a note's change, a later echo's change reaching the window does
// not make Sync return; once the note's change comes, Sync returns and
// the take holds both.
func TestRC1_SyncWaitsForEachKindsOwnChanges(t *testing.T) {
	st := &gatedState{State: inmem.NewState(), kind: noteKind, gate: make(chan struct{})}
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind, echoKind), recording.WithOwnWatches())
	require.NoError(t, err)
	started(t, rec)
	ctx := context.Background()

	st.hold.Store(true)
	require.NoError(t, st.Create(ctx, newNote("held", 1)))
	require.NoError(t, st.Create(ctx, typed.NewDefault[NoteSpec, EchoDef]("after", NoteSpec{N: 2})))
	require.Eventually(t, func() bool {
		r, err := rec.Take()
		return err == nil && holds(r, echoKind, "after")
	}, 30*time.Second, time.Millisecond, "the echo's change reaches the window")

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, rec.Sync(short), context.DeadlineExceeded, "Sync waits for the note's change, older than the echo's")

	close(st.gate)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	assert.True(t, holds(r, noteKind, "held"), "the take after Sync holds the note")
	assert.True(t, holds(r, echoKind, "after"))
}

// holds reports whether the recording's final state has kind's resource id.
func holds(r *recording.Recording, kind resource.Kind, id string) bool {
	for _, res := range r.Final {
		md := res.Metadata()
		if md.Type() == kind.Type() && md.ID() == id {
			return true
		}
	}
	return false
}

// gatedState is a state whose watches of kind hold their batches, once
// hold is set, until gate is closed.
type gatedState struct {
	state.State
	kind resource.Kind
	hold atomic.Bool
	gate chan struct{}
}

func (g *gatedState) Revision(ctx context.Context) (uint64, error) {
	return g.State.(state.RevisionReporter).Revision(ctx)
}

func (g *gatedState) KindRevision(ctx context.Context, kind resource.Kind) (uint64, uint64, error) {
	return g.State.(state.RevisionReporter).KindRevision(ctx, kind)
}

func (g *gatedState) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if kind.Type() != g.kind.Type() {
		return g.State.WatchKindAggregated(ctx, kind, ch, opts...)
	}
	mid := make(chan []state.Event, 16)
	if err := g.State.WatchKindAggregated(ctx, kind, mid, opts...); err != nil {
		return err
	}
	go func() {
		for {
			var evs []state.Event
			select {
			case <-ctx.Done():
				return
			case evs = <-mid:
			}
			if g.hold.Load() {
				select {
				case <-ctx.Done():
					return
				case <-g.gate:
				}
			}
			select {
			case <-ctx.Done():
				return
			case ch <- evs:
			}
		}
	}()
	return nil
}
