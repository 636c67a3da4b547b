package recording_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// watchCounting is a state that notes the kinds watched (once counting
// is on: the recorders' watches, not the Runtime's).
type watchCounting struct {
	state.State
	mu       sync.Mutex
	counting bool
	watched  []string
}

func (s *watchCounting) count(k resource.Kind) {
	s.mu.Lock()
	if s.counting {
		s.watched = append(s.watched, k.Type())
	}
	s.mu.Unlock()
}

func (s *watchCounting) start() {
	s.mu.Lock()
	s.counting = true
	s.mu.Unlock()
}

func (s *watchCounting) WatchKind(ctx context.Context, k resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	s.count(k)
	return s.State.WatchKind(ctx, k, ch, opts...)
}

func (s *watchCounting) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	s.count(k)
	return s.State.WatchKindAggregated(ctx, k, ch, opts...)
}

func (s *watchCounting) kinds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.watched))
}

// TestRC8_TheRuntimesWatchesAreTapped: a recorder of a Runtime watches
// only the kinds the Runtime does not (here the output no controller
// reads), and records the same changes as a recorder with watches of its
// own running beside it (a second tap of the Runtime is refused: the
// other one watches); when the Runtime's watch of a kind ends (a
// re-list), the recorder starts its window over.
func TestRC8_TheRuntimesWatchesAreTapped(t *testing.T) {
	st := &watchCounting{State: inmem.NewState()}
	rt, ctx := runEchoer(t, st)
	eventually(t, "the echoer wrote its echo (before the recorders start: both start from one state)", func() bool {
		_, err := st.Get(ctx, resource.NewPointer(ns, echoKind.Type(), "x"))
		return err == nil
	})
	st.start()
	tapped, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	started(t, tapped)
	assert.Equal(t, []string{echoKind.Type()}, st.kinds(), "the recorder watches the output only")
	_, _, err = rt.TapChanges(ctx, nil, nil)
	require.ErrorIs(t, err, runtime.ErrTapped, "one tap at a time")
	own, err := recording.New(st, registry(t), recording.WithRuntime(rt), recording.WithOwnWatches())
	require.NoError(t, err)
	started(t, own)
	assert.Equal(t, []string{echoKind.Type(), echoKind.Type(), noteKind.Type()}, st.kinds())

	for i := range 20 {
		require.NoError(t, st.Create(ctx, newNote(fmt.Sprint("n", i), i)))
	}
	_, err = st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "n3"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = 99; return nil })
	require.NoError(t, err)
	a, b := settled(t, tapped, st, echoKind, noteKind), settled(t, own, st, echoKind, noteKind)
	require.Equal(t, a.Revision, b.Revision, "both started from the same state")
	assert.Equal(t, changeLines(b), changeLines(a))
	assert.NotEmpty(t, a.Outside())

	require.NoError(t, rt.Relist(ctx, noteKind))
	eventually(t, "the tapped recorder started its window over", func() bool {
		r, err := tapped.Take()
		return err == nil && r.Start.After(a.Taken)
	})
	r, err := own.Take()
	require.NoError(t, err)
	assert.False(t, r.Start.After(a.Taken), "the recorder of its own watches did not start over")
}

// runEchoer runs a Runtime over st with the controller echoer (a Note
// "x" echoed as an Echo "x" one more) until the test ends.
func runEchoer(t *testing.T, st state.State) (*runtime.Runtime, context.Context) {
	t.Helper()
	return runController(t, st, pingPong[*Note, *Echo]{name: "echoer", newO: func() *Echo {
		return typed.NewDefault[NoteSpec, EchoDef]("x", NoteSpec{})
	}})
}

// runController runs a Runtime of c (and more) over st until the test
// ends.
func runController(t *testing.T, st state.State, c controller.Controller, more ...controller.Controller) (*runtime.Runtime, context.Context) {
	t.Helper()
	rt, err := runtime.New(st, nil)
	require.NoError(t, err)
	for _, c := range append([]controller.Controller{c}, more...) {
		require.NoError(t, rt.RegisterController(c))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return rt, ctx
}

func changeLines(r *recording.Recording) []string {
	var out []string
	for _, c := range r.Changes {
		out = append(out, fmt.Sprintf("%d %s %d %s %s %s", c.Revision, c.Pointer, c.Version, c.By, c.Op, c.Writer))
	}
	return out
}

// TestRC9_EachCommitSaysWhatItsPassRead: a recorder of a Runtime keeps,
// for each commit of its controllers, the revision of the state its
// pass's first read returned — the Note "x" the echoer read, at the
// revision of its last outside update, not a later one — and a second
// recorder of the same Runtime cannot tap its commits (one at a time).
func TestRC9_EachCommitSaysWhatItsPassRead(t *testing.T) {
	st := inmem.NewState()
	rt, ctx := runEchoer(t, st)
	// The echoer's first pass (it echoes a missing note as 1) must be over
	// before the recorder taps the Runtime: a pass that read before the tap
	// says no revision (0), and its echo could commit after the note's
	// creation below.
	eventually(t, "the echoer echoed the missing note", func() bool {
		_, err := st.Get(ctx, resource.NewPointer(ns, echoKind.Type(), "x"))
		return err == nil
	})
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	started(t, rec)
	_, err = rt.TapCommits(tapNothing{})
	require.ErrorIs(t, err, runtime.ErrTapped, "the recorder taps the Runtime's commits")
	require.NoError(t, st.Create(ctx, newNote("x", 1)))
	for n := 2; n <= 5; n++ {
		eventually(t, "the echoer echoed the note", func() bool {
			e, err := st.Get(ctx, resource.NewPointer(ns, echoKind.Type(), "x"))
			return err == nil && e.(*Echo).TypedSpec().N == n
		})
		_, err = st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "x"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = n; return nil })
		require.NoError(t, err)
	}
	eventually(t, "the echoer echoed the last note", func() bool {
		e, err := st.Get(ctx, resource.NewPointer(ns, echoKind.Type(), "x"))
		return err == nil && e.(*Echo).TypedSpec().N == 6
	})
	r := settled(t, rec, st, echoKind, noteKind)
	var noteAt uint64 // the revision of the last outside change of the note
	echoes := 0
	for _, c := range r.Changes {
		switch {
		case c.By == recording.ByOutside && c.Pointer.Type() == noteKind.Type():
			noteAt = c.Revision
		case c.By == recording.ByController && c.Writer == "echoer":
			echoes++
			assert.Equal(t, noteAt, c.Read, "the echo at revision %d was made by a pass that read the note at revision %d", c.Revision, noteAt)
		}
	}
	assert.GreaterOrEqual(t, echoes, 5)
}

// tapNothing is a runtime.CommitTap that keeps nothing.
type tapNothing struct{}

func (tapNothing) Committed(string, resource.Pointer, uint64, uint64, uint64, *resource.PointerKey) {
}

// serialized is a CoreState that serializes the writes to the one it
// wraps (as a daemon's change log does) and says so
// (state.CoreUnwrapper), counting the watches opened through it.
type serialized struct {
	state.CoreState
	mu      sync.Mutex
	watches watchCounting
}

func (s *serialized) UnwrapCore() state.CoreState { return s.CoreState }

func (s *serialized) Revision(ctx context.Context) (uint64, error) {
	return s.CoreState.(state.RevisionReporter).Revision(ctx)
}

func (s *serialized) KindRevision(ctx context.Context, k resource.Kind) (last, at uint64, err error) {
	return s.CoreState.(state.RevisionReporter).KindRevision(ctx, k)
}

func (s *serialized) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.CoreState.Create(ctx, r, opts...)
}

func (s *serialized) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.CoreState.Update(ctx, r, opts...)
}

func (s *serialized) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	s.watches.count(k)
	return s.CoreState.WatchKindAggregated(ctx, k, ch, opts...)
}

// TestRC11_AWrapperOfACoreThatCommitsThroughItTapsItsCommits: a recorder
// over a state WrapCore built on a wrapper of an inmem state that commits
// every write through it (state.CoreUnwrapper; two such wrappers deep)
// reads the kind's commits from the inmem state: it opens no watch, and
// records every write, none coalesced.
func TestRC11_AWrapperOfACoreThatCommitsThroughItTapsItsCommits(t *testing.T) {
	ctx := context.Background()
	outer := &serialized{CoreState: &serialized{CoreState: inmem.NewState()}}
	outer.watches.start()
	st := state.WrapCore(outer)
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind))
	require.NoError(t, err)
	started(t, rec)
	for i := range 500 {
		require.NoError(t, st.Create(ctx, newNote(fmt.Sprint("n", i), i)))
	}
	_, err = st.UpdateWithConflicts(ctx, newNote("n0", 0).Metadata(), func(r resource.Resource) error { r.(*Note).TypedSpec().N = -1; return nil })
	require.NoError(t, err)
	require.NoError(t, rec.Sync(ctx))
	r, err := rec.Take()
	require.NoError(t, err)
	assert.Empty(t, outer.watches.kinds(), "the recorder reads the kind's commits: it watches nothing")
	require.Len(t, r.Changes, 501)
	assert.Zero(t, r.Coalesced)
	require.NoError(t, sameResources(listAll(t, st, noteKind), r.Final))
}
