package recording_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

// TestRC1_EachBackendOfARoutedStateIsCutAtItsOwnRevision: over a routed
// state whose two backends number their changes each on its own (one far
// ahead of the other), every outside write after the recorder started is
// a change of the recording, in either backend — none folded into the
// starting state because its backend's revision is below the other
// backend's — through the commit tap (RC11) and through the recorder's
// own watches; each backend's changes are in its order (and, read from
// the commits, in the order of their writes across the backends); the
// starting state with the changes applied is the final
// state, and that is the state.
func TestRC1_EachBackendOfARoutedStateIsCutAtItsOwnRevision(t *testing.T) {
	for _, tc := range []struct {
		name    string
		own     bool
		wrapped bool
	}{
		{name: "commit tap"},
		{name: "own watches", own: true},
		{name: "behind a wrapper that hides the routes", wrapped: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			busy, quiet := inmem.NewState(), inmem.NewState()
			rs, err := routed.New([]routed.Rule{routed.Exact(ns, busy)}, routed.WithDefault(quiet))
			require.NoError(t, err)
			var st state.State = rs
			if tc.wrapped {
				st = unrouted{State: rs, RevisionReporter: rs}
			}
			own := tc.own || tc.wrapped
			quietKind := resource.NewKind("quiet", noteKind.Type())
			quietNote := func(id string, n int) *Note {
				return typed.New[NoteSpec, NoteDef](resource.NewMetadata("quiet", noteKind.Type(), id, resource.VersionUndefined), NoteSpec{N: n})
			}
			// The busy backend is a hundred revisions ahead of the quiet one.
			for i := range 100 {
				require.NoError(t, st.Create(ctx, newNote(fmt.Sprint("b", i), i)))
			}
			require.NoError(t, st.Create(ctx, quietNote("q0", 0)))
			opts := []recording.Option{recording.WithKinds(quietKind, noteKind)}
			if tc.own {
				opts = append(opts, recording.WithOwnWatches())
			}
			rec, err := recording.New(st, registry(t), opts...)
			require.NoError(t, err)
			started(t, rec)

			// Outside writes to both backends after the start, interleaved.
			var written []string
			wrote := func(p resource.Pointer) {
				got, err := st.Get(ctx, p)
				require.NoError(t, err)
				written = append(written, fmt.Sprint(resource.PointerOf(p), "@", got.Metadata().Version().Value()))
			}
			for i := range 10 {
				q := quietNote(fmt.Sprint("q", i+1), i)
				require.NoError(t, st.Create(ctx, q))
				wrote(q.Metadata())
				b := resource.NewPointer(ns, noteKind.Type(), fmt.Sprint("b", i))
				_, err := st.UpdateWithConflicts(ctx, b, func(r resource.Resource) error { r.(*Note).TypedSpec().N = -i - 1; return nil })
				require.NoError(t, err)
				wrote(b)
			}
			r := settled(t, rec, st, quietKind, noteKind)

			recorded := map[string]bool{}
			var order []string
			lastRev := map[string]uint64{}
			for _, c := range r.Changes {
				assert.Equal(t, recording.ByOutside, c.By)
				key := fmt.Sprint(c.Pointer, "@", c.Version)
				recorded[key] = true
				order = append(order, key)
				backend := c.Pointer.Namespace()
				assert.Greater(t, c.Revision, lastRev[backend], "each backend's changes in the order it applied them")
				lastRev[backend] = c.Revision
			}
			if !own {
				// Read from the commits, each at its write's time: in the
				// order they were written across the backends too.
				assert.Equal(t, written, order)
			}
			for _, key := range written {
				assert.True(t, recorded[key], "the write of %s is a change of the recording, not folded into its start", key)
			}
			for _, res := range r.Initial {
				if res.Metadata().Namespace() == "quiet" {
					assert.Equal(t, "q0", res.Metadata().ID(), "the quiet backend's starting state is the one before the writes")
				} else {
					assert.Equal(t, uint64(1), res.Metadata().Version().Value(), "the busy backend's starting state is the one before the writes")
				}
			}
			require.NoError(t, sameResources(replayed(r), r.Final), "the starting state with the changes applied is the final state")
			require.NoError(t, sameResources(listAll(t, st, quietKind, noteKind), r.Final))

			// What a file holds is the same recording.
			reg := registry(t)
			decoded, err := recording.Decode(encode(t, r, reg), reg)
			require.NoError(t, err)
			require.NoError(t, sameResources(replayed(decoded), listAll(t, st, quietKind, noteKind)))
		})
	}
}

// replayed applies a recording of outside writes only to its starting
// state, and returns the resources sorted as a recording's are.
func replayed(r *recording.Recording) []resource.Resource {
	byKey := map[resource.PointerKey]resource.Resource{}
	for _, res := range r.Initial {
		byKey[resource.PointerOf(res.Metadata())] = res
	}
	for _, c := range r.Changes {
		if c.Op == recording.OpDestroy {
			delete(byKey, c.Pointer)
		} else if c.Resource != nil {
			byKey[c.Pointer] = c.Resource
		}
	}
	out := make([]resource.Resource, 0, len(byKey))
	for _, res := range byKey {
		out = append(out, res)
	}
	slices.SortFunc(out, func(a, b resource.Resource) int {
		return cmp.Or(resource.KindOf(a.Metadata()).Compare(resource.KindOf(b.Metadata())), cmp.Compare(a.Metadata().ID(), b.Metadata().ID()))
	})
	return out
}

// unrouted is a wrapper of a routed state that forwards its revisions
// (as an access guard does) but neither its routes nor its commit tap.
type unrouted struct {
	state.State
	state.RevisionReporter
}

// TestRC1_ARoutedStatesWindowRollsEachBackendAtItsOwnRevision: once the
// window of a recorder over a routed state took checkpoints of its own
// (RC3: the busy backend's changes filled half its bytes, again and
// again), a change of the quiet backend, whose revisions are far below
// the busy one's, is still a change of the recording after the newest
// checkpoint, not folded into it.
func TestRC1_ARoutedStatesWindowRollsEachBackendAtItsOwnRevision(t *testing.T) {
	ctx := context.Background()
	busy, quiet := inmem.NewState(), inmem.NewState()
	st, err := routed.New([]routed.Rule{routed.Exact(ns, busy)}, routed.WithDefault(quiet))
	require.NoError(t, err)
	quietKind := resource.NewKind("quiet", noteKind.Type())
	require.NoError(t, st.Create(ctx, newNote("b", 0)))
	rec, err := recording.New(st, registry(t), recording.WithKinds(quietKind, noteKind), recording.WithWindow(time.Hour, 4<<10))
	require.NoError(t, err)
	started(t, rec)
	for i := 1; i <= 300; i++ {
		_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "b"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = i; return nil })
		require.NoError(t, err)
	}
	r := settled(t, rec, st, quietKind, noteKind)
	require.Greater(t, r.Revision, uint64(100), "the window rolled: it starts after the busy backend's first changes")

	q := typed.New[NoteSpec, NoteDef](resource.NewMetadata("quiet", noteKind.Type(), "q", resource.VersionUndefined), NoteSpec{N: 1})
	require.NoError(t, st.Create(ctx, q))
	r = settled(t, rec, st, quietKind, noteKind)
	i := slices.IndexFunc(r.Changes, func(c recording.Change) bool { return c.Pointer == resource.PointerOf(q.Metadata()) })
	require.GreaterOrEqual(t, i, 0, "the quiet backend's write is a change of the recording")
	assert.Equal(t, recording.OpCreate, r.Changes[i].Op)
	for _, res := range r.Initial {
		assert.NotEqual(t, "quiet", res.Metadata().Namespace(), "the starting state is before the quiet write")
	}
	require.NoError(t, sameResources(replayed(r), r.Final))
}

// TestRC1_SyncWaitsForEachBackendOfARoutedState: over a routed state
// whose kinds live in two backends, Sync returns once the recorder has
// seen every change either backend committed before the call — through
// the commit tap and through its own watches — so that a take right
// after it holds them all.
func TestRC1_SyncWaitsForEachBackendOfARoutedState(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("own watches=%v", own), func(t *testing.T) {
			ctx := context.Background()
			st, quietKind, quietNote := twoBackends(t)
			opts := []recording.Option{recording.WithKinds(quietKind, noteKind)}
			if own {
				opts = append(opts, recording.WithOwnWatches())
			}
			rec, err := recording.New(st, registry(t), opts...)
			require.NoError(t, err)
			started(t, rec)
			for i := range 300 {
				require.NoError(t, st.Create(ctx, newNote(fmt.Sprint("n", i), i)))
				if i%30 == 0 {
					require.NoError(t, st.Create(ctx, quietNote(fmt.Sprint("q", i), i)))
				}
			}
			require.NoError(t, rec.Sync(ctx))
			r, err := rec.Take()
			require.NoError(t, err)
			require.NoError(t, sameResources(listAll(t, st, quietKind, noteKind), r.Final), "the take right after Sync holds every write")
			require.Len(t, r.Changes, 310)
		})
	}
}

// TestRC12_AWorldChangeOverARoutedStateIsNotedAtItsRevision: over a
// routed state whose backends number their changes each on its own, a
// world read and a world action carry the highest of the backends'
// revisions when they were noted (as Recording.Revision is the highest
// of the starting ones), not 0, and sit between the writes before and
// after them.
func TestRC12_AWorldChangeOverARoutedStateIsNotedAtItsRevision(t *testing.T) {
	ctx := context.Background()
	st, quietKind, quietNote := twoBackends(t)
	rec, err := recording.New(st, registry(t), recording.WithKinds(quietKind, noteKind))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("before", 1)))
	require.NoError(t, st.Create(ctx, quietNote("before", 1)))
	require.NoError(t, rec.Sync(ctx))
	var highest uint64
	for _, b := range []resource.Namespace{ns, "quiet"} {
		backend, err := st.Backend(b)
		require.NoError(t, err)
		rev, err := backend.(state.RevisionReporter).Revision(ctx)
		require.NoError(t, err)
		highest = max(highest, rev)
	}
	rec.Observe("kernel links", []byte("eth0"))
	rec.Act("unplug eth0")
	require.NoError(t, st.Create(ctx, newNote("after", 1)))
	require.NoError(t, st.Create(ctx, quietNote("after", 1)))
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	var got []string
	for _, c := range r.Changes {
		if c.By == recording.ByWorld {
			assert.Equal(t, highest, c.Revision, "%s is noted at the highest of the backends' revisions", c.Action)
			got = append(got, c.Action)
		} else {
			got = append(got, c.Pointer.ID())
		}
	}
	assert.Equal(t, []string{"before", "before", "kernel links", "unplug eth0", "after", "after"}, got)
}

// twoBackends returns a routed state of two inmem backends (the notes'
// namespace one, the rest the other, a hundred revisions behind) with
// the kind of notes in the quiet one and what builds a note of it.
func twoBackends(t *testing.T) (*routed.State, resource.Kind, func(id string, n int) *Note) {
	busy, quiet := inmem.NewState(), inmem.NewState()
	st, err := routed.New([]routed.Rule{routed.Exact(ns, busy)}, routed.WithDefault(quiet))
	require.NoError(t, err)
	for i := range 100 {
		require.NoError(t, busy.Create(context.Background(), newNote(fmt.Sprint("b", i), i)))
	}
	quietNote := func(id string, n int) *Note {
		return typed.New[NoteSpec, NoteDef](resource.NewMetadata("quiet", noteKind.Type(), id, resource.VersionUndefined), NoteSpec{N: n})
	}
	return st, resource.NewKind("quiet", noteKind.Type()), quietNote
}
