package runtime_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// recordingScheduler holds everything the Runtime hands it until the test
// releases it.
type recordingScheduler struct {
	mu         sync.Mutex
	deliveries []sched.Delivery
	gates      map[sched.Gate]chan struct{}
	caches     []sched.CacheChange
}

func newRecordingScheduler() *recordingScheduler {
	return &recordingScheduler{gates: map[sched.Gate]chan struct{}{}}
}

func (s *recordingScheduler) Route(b sched.Batch, events []state.Event, metas []*resource.Metadata, bootstrap bool) bool {
	b.HandOver(events, metas, bootstrap, s.deliver)
	return true
}

func (s *recordingScheduler) Cache(b sched.CacheBatch) bool {
	b.HandOver(s.cache)
	return true
}

func (s *recordingScheduler) deliver(d sched.Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deliveries = append(s.deliveries, d)
}

func (s *recordingScheduler) Gate(ctx context.Context, g sched.Gate) bool {
	ch := make(chan struct{})
	s.mu.Lock()
	s.gates[g] = ch
	s.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.gates, g)
		s.mu.Unlock()
		return false
	}
}

func (s *recordingScheduler) cache(c sched.CacheChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caches = append(s.caches, c)
}

// waiting returns the gates waited at now.
func (s *recordingScheduler) waiting() []sched.Gate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sched.Gate
	for g := range s.gates {
		out = append(out, g)
	}
	return out
}

// open releases the goroutine waiting at g.
func (s *recordingScheduler) open(t *testing.T, g sched.Gate) {
	t.Helper()
	s.mu.Lock()
	ch, ok := s.gates[g]
	delete(s.gates, g)
	s.mu.Unlock()
	require.True(t, ok, "nothing waits at %+v; waiting: %+v", g, s.waiting())
	close(ch)
}

// takeDeliveries returns the deliveries held, and forgets them.
func (s *recordingScheduler) takeDeliveries() []sched.Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.deliveries
	s.deliveries = nil
	return out
}

func (s *recordingScheduler) takeCaches() []sched.CacheChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.caches
	s.caches = nil
	return out
}

// scheduled returns a Runtime over st built with the scheduler s (as the
// simulator builds its Runtimes).
func scheduled(t *testing.T, st state.State, s sched.Scheduler, opts ...runtime.Option) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(st, zap.NewNop(), append(opts, testhook.WithScheduler(s).(runtime.Option))...)
	require.NoError(t, err)
	return rt
}

// TestSchedule_AbsentIsDirect: a Runtime given no scheduler (nil) routes,
// caches and runs at once, as one built without the option.
func TestSchedule_AbsentIsDirect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		rt := scheduled(t, st, nil, runtime.WithCachedResource(testNS, typeA))
		require.NoError(t, rt.RegisterController(copyController("ab", typeA, typeB)))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		mustCreate(t, st, newPair(typeA, "x", 3))
		synctest.Wait()
		b, err := st.Get(t.Context(), ptr(typeB, "x"))
		require.NoError(t, err, "copied without a scheduler to let anything through")
		assert.Equal(t, 3, b.(*Pair).TypedSpec().A)
		cancel()
		require.NoError(t, <-done)
	})
}

// TestSchedule_EveryStepWaitsForTheScheduler: with a scheduler attached,
// a Controller runs only when its start and each of its passes are let
// through, a QController's item is queued only when its delivery is
// released and runs only when let through, and a cached kind's live
// change reaches the cache only when applied.
func TestSchedule_EveryStepWaitsForTheScheduler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		s := newRecordingScheduler()
		rt := scheduled(t, st, s, runtime.WithCachedResource(testNS, typeA))

		var runs, passes, reconciles atomic.Int32
		require.NoError(t, rt.RegisterController(&funcController{
			name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				runs.Add(1)
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
						passes.Add(1)
					}
				}
			},
		}))
		require.NoError(t, rt.RegisterQController(&funcQController{
			name: "q", settings: primaryOf(typeA),
			reconcile: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
				reconciles.Add(1)
				return nil
			},
		}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			assert.NoError(t, rt.Run(ctx))
		}()
		synctest.Wait()

		start := sched.Gate{Kind: sched.GateStart, Controller: "c"}
		pass := sched.Gate{Kind: sched.GatePass, Controller: "c"}
		assert.Equal(t, []sched.Gate{start}, s.waiting(), "the Controller waits to start")
		assert.Zero(t, runs.Load())
		s.open(t, start)
		synctest.Wait()
		assert.Equal(t, int32(1), runs.Load())
		assert.Equal(t, []sched.Gate{pass}, s.waiting(), "its start event waits")
		assert.Zero(t, passes.Load())
		s.open(t, pass)
		synctest.Wait()
		assert.Equal(t, int32(1), passes.Load())

		// A change: both deliveries are held, and the cache's change.
		s.takeCaches() // the end of the first bootstrap
		require.NoError(t, st.Create(ctx, newPair(typeA, "a1", 1)))
		synctest.Wait()
		assert.Empty(t, s.waiting())
		ds := s.takeDeliveries()
		require.Len(t, ds, 2, "one delivery per subscription")
		slices.SortFunc(ds, func(a, b sched.Delivery) int { return boolCompare(a.QController, b.QController) })
		assert.False(t, ds[0].QController)
		assert.Equal(t, "c", ds[0].Controller)
		assert.Equal(t, "q", ds[1].Controller)
		assert.Equal(t, controller.InputQPrimary, ds[1].Input)
		assert.Equal(t, state.Created, ds[1].Type)
		assert.Equal(t, "a1", ds[1].Resource.ID())
		assert.NotZero(t, ds[1].Revision)
		cs := s.takeCaches()
		require.Len(t, cs, 1)
		assert.True(t, cs[0].Live)
		assert.Equal(t, ds[1].Revision, cs[0].Revision)
		cs[0].Apply()

		// The Controller's wake-up was released by the test's scheduler
		// only now; the Runtime had delivered nothing.
		ds[0].Release()
		synctest.Wait()
		assert.Equal(t, int32(1), passes.Load(), "the pass waits at its gate")
		s.open(t, pass)
		synctest.Wait()
		assert.Equal(t, int32(2), passes.Load())

		assert.Zero(t, reconciles.Load(), "nothing queued before the delivery")
		ds[1].Release()
		synctest.Wait()
		item := sched.Gate{Kind: sched.GateItem, Controller: "q", Item: resource.PointerOf(ptr(typeA, "a1"))}
		assert.Equal(t, []sched.Gate{item}, s.waiting())
		assert.Zero(t, reconciles.Load(), "the item waits at its gate")
		s.open(t, item)
		synctest.Wait()
		assert.Equal(t, int32(1), reconciles.Load())

		cancel()
		<-done
		assert.Empty(t, s.waiting(), "every gate is left when the Runtime stops")
	})
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

// TestSchedule_StreamsAndSilentChanges: a subscription's changes are
// handed over as one stream, in order; a change a mapped input only
// remembers (the destroy of a destroy-ready output: rule Q4's last
// version) comes as a Silent delivery of that stream.
func TestSchedule_StreamsAndSilentChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		s := newRecordingScheduler()
		rt := scheduled(t, st, s)
		require.NoError(t, rt.RegisterQController(&funcQController{
			name: "q",
			settings: controller.QSettings{
				Inputs:  []controller.Input{in(typeA, controller.InputQPrimary), in(typeB, controller.InputQMappedDestroyReady)},
				Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
			},
		}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			assert.NoError(t, rt.Run(ctx))
		}()
		synctest.Wait()

		require.NoError(t, st.Create(ctx, newPair(typeB, "b1", 1), state.WithCreateOwner("q")))
		_, err := st.Teardown(ctx, ptr(typeB, "b1"), state.WithTeardownOwner("q"))
		require.NoError(t, err)
		require.NoError(t, st.Destroy(ctx, ptr(typeB, "b1"), state.WithDestroyOwner("q")))
		synctest.Wait()

		var ds []sched.Delivery
		for _, d := range s.takeDeliveries() {
			if d.Resource.Type() == typeB {
				ds = append(ds, d)
			}
		}
		require.Len(t, ds, 3, "created (remembered), tearing down (queued), destroyed (remembered)")
		assert.True(t, ds[0].Silent, "the creation queues nothing")
		assert.Equal(t, state.Updated, ds[1].Type)
		assert.False(t, ds[1].Silent, "tearing down with no finalizers: destroy-ready")
		assert.Equal(t, state.Destroyed, ds[2].Type)
		assert.True(t, ds[2].Silent)
		assert.Equal(t, ds[0].Stream, ds[1].Stream)
		assert.Equal(t, ds[1].Stream, ds[2].Stream)

		cancel()
		<-done
	})
}
