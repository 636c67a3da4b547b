package main

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// watchNoting is the state a demo runs on, noting the kinds watched
// through it; it commits every write to the inmem state it wraps
// (state.CoreUnwrapper) and tells what the change log asks of it.
type watchNoting struct {
	state.State
	mu      sync.Mutex
	watched []resource.KindKey
}

func (s *watchNoting) UnwrapCore() state.CoreState { return s.State }

func (s *watchNoting) WatchKind(ctx context.Context, k resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	s.note(k)
	return s.State.WatchKind(ctx, k, ch, opts...)
}

func (s *watchNoting) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	s.note(k)
	return s.State.WatchKindAggregated(ctx, k, ch, opts...)
}

func (s *watchNoting) note(k resource.Kind) {
	s.mu.Lock()
	s.watched = append(s.watched, resource.KindOf(k))
	s.mu.Unlock()
}

func (s *watchNoting) watchedKinds() []resource.KindKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.watched)
}

func (s *watchNoting) KindHead(ctx context.Context, k resource.Kind) (state.Bookmark, error) {
	return s.State.(state.KindHeadReporter).KindHead(ctx, k)
}

func (s *watchNoting) Revision(ctx context.Context) (uint64, error) {
	return s.State.(state.RevisionReporter).Revision(ctx)
}

func (s *watchNoting) KindRevision(ctx context.Context, k resource.Kind) (last, at uint64, err error) {
	return s.State.(state.RevisionReporter).KindRevision(ctx, k)
}

func (s *watchNoting) ValidateType(k resource.Kind) error { return state.ValidateType(s.State, k) }

// TestRecording_TheDemosRecorderReadsTheCommitsOfTheKindsNoControllerReads:
// the demo's flight recorder, over the demo's change log, reads the kinds
// no controller of the agent reads from their commits (recording rule
// RC11: the change log lets it reach the state under it) and opens no
// watch of them; it records every change of them all the same.
func TestRecording_TheDemosRecorderReadsTheCommitsOfTheKindsNoControllerReads(t *testing.T) {
	in, err := loadIntent("")
	require.NoError(t, err)
	st := &watchNoting{State: inmem.NewState()}
	d, _ := startDaemon(t, config{Intent: in, State: st})
	g, err := d.engine.GetDependencyGraph()
	require.NoError(t, err)
	read := map[resource.Type]bool{}
	for _, e := range g.Edges {
		if e.EdgeType != controller.EdgeOutputExclusive && e.EdgeType != controller.EdgeOutputShared {
			read[e.ResourceType] = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	require.NoError(t, d.recorder.Sync(ctx))
	rec, err := d.recorder.Take()
	require.NoError(t, err)
	var unread []resource.KindKey
	for _, k := range rec.Kinds {
		if !read[k.Type] {
			unread = append(unread, resource.KindOf(resource.NewKind(k.Namespace, k.Type)))
		}
	}
	require.NotEmpty(t, unread, "the agent writes kinds no controller reads")
	watched := st.watchedKinds()
	for _, k := range unread {
		assert.NotContains(t, watched, k, "%s is read from its commits, not watched", k)
	}
	// Every resource of those kinds the recording ends with and did not
	// start with came by a recorded change (the daemon goes on writing:
	// the recording, not the state now, is the reference).
	changed, initial := map[resource.KindKey]bool{}, map[resource.KindKey]bool{}
	for _, c := range rec.Changes {
		if c.By != recording.ByWorld {
			changed[resource.KindOf(c.Pointer)] = true
		}
	}
	for _, r := range rec.Initial {
		initial[resource.KindOf(r.Metadata())] = true
	}
	for _, r := range rec.Final {
		if k := resource.KindOf(r.Metadata()); slices.Contains(unread, k) && !initial[k] {
			assert.True(t, changed[k], "the changes of %s are recorded", k)
		}
	}
}
