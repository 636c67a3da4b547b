package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// resumingState is an inmem state that resumes its kind watches
// (state.KindWatchResumer), as a State of one's own may declare, and whose
// whole-kind watches of typ go through a relay that the test can break
// (the relay ends with an Errored event) or hold (it forwards nothing until
// released). It records how each watch of typ was opened, and can refuse
// resumes with a buffer-overrun error, as a state whose history no longer
// holds the bookmark does.
type resumingState struct {
	forwardingState
	typ    resource.Type
	refuse atomic.Bool

	mu     sync.Mutex
	breaks []chan struct{} // one per relay; protected by mu
	opens  []string        // "list" or "resume" per watch of typ; protected by mu
	gate   chan struct{}   // while not nil, relays wait until it is closed; protected by mu
}

func newResumingState(typ resource.Type) *resumingState {
	return &resumingState{forwardingState: forwardingState{inmem.NewState()}, typ: typ}
}

func (s *resumingState) ResumesKindWatches(resource.Kind) bool { return true }

func (s *resumingState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if k.Type() != s.typ {
		return s.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	var o state.WatchKindOptions
	for _, opt := range opts {
		opt(&o)
	}
	how := "list"
	if o.StartFromBookmark != nil {
		how = "resume"
		if s.refuse.Load() {
			return state.NewBufferOverrunError(nil, "injected: the bookmark is older than the history")
		}
	}
	inner := make(chan []state.Event)
	wctx, cancel := context.WithCancel(ctx)
	if err := s.State.WatchKindAggregated(wctx, k, inner, opts...); err != nil {
		cancel()
		return err
	}
	brk := make(chan struct{})
	s.mu.Lock()
	s.breaks = append(s.breaks, brk)
	s.opens = append(s.opens, how)
	s.mu.Unlock()
	go s.relay(ctx, cancel, inner, ch, brk)
	return nil
}

// relay forwards inner to ch until ctx is done or brk is closed.
func (s *resumingState) relay(ctx context.Context, cancel context.CancelFunc, inner <-chan []state.Event, ch chan<- []state.Event, brk chan struct{}) {
	defer cancel()
	for {
		var b []state.Event
		select {
		case <-ctx.Done():
			return
		case <-brk:
			select {
			case ch <- []state.Event{{Type: state.Errored, Error: state.NewBufferOverrunError(nil, "injected failure")}}:
			case <-ctx.Done():
			}
			return
		case b = <-inner:
		}
		s.mu.Lock()
		gate := s.gate
		s.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return
			}
		}
		select {
		case ch <- b:
		case <-ctx.Done():
			return
		}
	}
}

func (s *resumingState) breakLatest() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.breaks[len(s.breaks)-1])
}

func (s *resumingState) hold() {
	s.mu.Lock()
	s.gate = make(chan struct{})
	s.mu.Unlock()
}

func (s *resumingState) release() {
	s.mu.Lock()
	close(s.gate)
	s.gate = nil
	s.mu.Unlock()
}

func (s *resumingState) openings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.opens...)
}

// TestWatchFailure_ResumedFromTheBookmarkRoutesEachChangeOnce: over a state
// that resumes kind watches, an uncached kind's watch that fails is
// resumed from the bookmark of the last event it routed, not listed: the
// changes made while it was down reach MapInput once each — an update, a
// create, and a destroy with the last version (rule Q4) — and nothing
// routed before the failure is routed again, however often the watch
// fails.
func TestWatchFailure_ResumedFromTheBookmarkRoutesEachChangeOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newResumingState(typeB)
		var rec mapRecorder
		core, logs := observer.New(zapcore.WarnLevel)
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)),
			runtimetest.WithQControllers(rec.controller("q", controller.InputQMapped)))
		ctx := context.Background()
		for _, id := range []string{"m1", "m2", "m3"} {
			mustCreate(t, st, childOf(id, "a"+id[1:]))
		}
		runtimetest.Settle(t, e.Runtime)
		require.NoError(t, st.Modify(ctx, newPair(typeB, "m1", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		runtimetest.Settle(t, e.Runtime)

		for round := range 2 {
			st.breakLatest()
			synctest.Wait()
			m2 := "m2"
			if round == 1 {
				m2 = "m4" // created in round 0
			}
			require.NoError(t, st.Modify(ctx, newPair(typeB, m2, 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A++; return nil }))
			if round == 0 {
				require.NoError(t, st.Destroy(ctx, ptr(typeB, "m3")))
				mustCreate(t, st, childOf("m4", "a4"))
			}
			time.Sleep(time.Second) // the re-watch backoff
			runtimetest.Settle(t, e.Runtime)
		}

		assert.Equal(t, []string{"live parent=a1 v1", "live parent=a1 v2"}, rec.of("m1"), "nothing routed before a failure is routed again")
		assert.Equal(t, []string{"live parent=a2 v1", "live parent=a2 v2"}, rec.of("m2"))
		assert.Equal(t, []string{"live parent=a3 v1", "destroyed parent=a3 v1"}, rec.of("m3"), "Q4: the destroy while down, with the last version")
		assert.Equal(t, []string{"live parent=a4 v1", "live parent=a4 v2"}, rec.of("m4"))
		assert.Equal(t, []string{"list", "resume", "resume"}, st.openings(), "resumed, never listed again")
		assert.Equal(t, uint64(2), relists(t, e.Runtime, typeB))
		assert.Empty(t, logs.FilterMessageSnippet("cannot resume").All())
	})
}

// TestWatchFailure_RefusedResumeListsAgainAndWarns: when the state refuses
// to resume (the bookmark is older than its history), the kind is listed
// again: a change made while the watch was down is routed, the kind is
// live afterwards, and a warning says that the resources destroyed
// meanwhile are not routed as destroyed (there is no memory to diff
// against).
func TestWatchFailure_RefusedResumeListsAgainAndWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newResumingState(typeB)
		var rec mapRecorder
		core, logs := observer.New(zapcore.WarnLevel)
		e := start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)),
			runtimetest.WithQControllers(rec.controller("q", controller.InputQMapped)))
		ctx := context.Background()
		mustCreate(t, st, childOf("m1", "a1"))
		runtimetest.Settle(t, e.Runtime)

		st.refuse.Store(true)
		st.breakLatest()
		synctest.Wait()
		require.NoError(t, st.Modify(ctx, newPair(typeB, "m1", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		time.Sleep(time.Second) // the re-watch backoff
		runtimetest.Settle(t, e.Runtime)
		assert.Equal(t, []string{"live parent=a1 v1", "live parent=a1 v2"}, rec.of("m1"))
		assert.Equal(t, []string{"list", "list"}, st.openings())
		assert.Len(t, logs.FilterMessageSnippet("cannot resume the kind's watch from its bookmark").All(), 1)

		mustCreate(t, st, childOf("m2", "a2"))
		runtimetest.Settle(t, e.Runtime)
		assert.Equal(t, []string{"live parent=a2 v1"}, rec.of("m2"), "live after the list")
	})
}

// TestRelist_OverAResumableStateWaitsForTheWatch: over a state that
// resumes kind watches, Relist of an uncached kind reopens nothing and
// returns once the running watch has routed every change committed before
// the call (here held back by the state): the change is then queued, the
// unchanged resource is not, and the re-list is counted.
func TestRelist_OverAResumableStateWaitsForTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newResumingState(typeA)
		log := &callLog{}
		q := &funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return nil
			}}
		for _, id := range []string{"a", "b"} {
			mustCreate(t, st, newPair(typeA, id, 1))
		}
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(q))
		runtimetest.Settle(t, e.Runtime)
		log.take()

		st.hold()
		setPair(t, st, typeA, "a", 2)
		returned := make(chan error, 1)
		go func() { returned <- e.Runtime.Relist(context.Background(), kind(typeA)) }()
		synctest.Wait()
		select {
		case err := <-returned:
			require.FailNow(t, "Relist returned before the watch routed the change", "%v", err)
		default:
		}
		st.release()
		synctest.Wait()
		require.NoError(t, <-returned)
		runtimetest.Settle(t, e.Runtime)
		assert.Equal(t, []string{"a"}, ids(log.take()), "the change, once; not the unchanged resource")
		assert.Equal(t, []string{"list"}, st.openings(), "no watch reopened")
		assert.Equal(t, uint64(1), relists(t, e.Runtime, typeA))

		require.NoError(t, e.Runtime.Relist(context.Background(), kind(typeA)), "nothing pending: returns at once")
		assert.Equal(t, uint64(2), relists(t, e.Runtime, typeA))
		assert.Empty(t, log.take())
	})
}
