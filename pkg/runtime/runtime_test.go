package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The Runtime rules E1–E3 are tested in conformance; these tests check what
// the runtime documents beyond them: bad options, registration after Run,
// Run waiting for its slowest controller, registrations on fresh kinds and
// during a bootstrap, and its cache.

func TestNew_RefusesBadOptions(t *testing.T) {
	t.Parallel()
	st := inmem.NewState()
	for name, opt := range map[string]runtime.Option{
		"cached kind without namespace": runtime.WithCachedResource("", typeA),
		"cached kind without type":      runtime.WithCachedResource(testNS, ""),
		"restart backoff zero":          runtime.WithRestartBackoff(0, time.Second),
		"restart backoff max < initial": runtime.WithRestartBackoff(time.Second, time.Millisecond),
		"queue backoff negative":        runtime.WithQueueBackoff(-time.Second, time.Second),
		"queue backoff max < initial":   runtime.WithQueueBackoff(time.Second, time.Millisecond),
	} {
		_, err := runtime.New(st, nil, opt)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
	}
	_, err := runtime.New(nil, nil)
	assert.True(t, state.IsInvalidError(err))
	_, err = runtime.New(st, nil, runtime.WithCachedResource(testNS, typeA), runtime.WithRestartBackoff(time.Second, time.Second), runtime.WithMetrics(false))
	assert.NoError(t, err)
}

// TestRegistrationAfterRunReturnedFails: a second Run fails, during the
// first and after it, and so does a registration after Run returned.
func TestRegistrationAfterRunReturnedFails(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rt, err := runtime.New(inmem.NewState(), zap.NewNop())
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		assert.Error(t, rt.Run(ctx), "a second Run during the first")
		cancel()
		require.NoError(t, <-done)
		assert.Error(t, rt.Run(t.Context()), "a Run after the first")
		assert.Error(t, rt.RegisterController(&funcController{name: "late"}), "registration after Run returned")
	})
}

// TestRunWaitsForItsSlowestController: Run returns once every controller
// returned — when the slowest did, not later — with no goroutine left.
func TestRunWaitsForItsSlowestController(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		rt, err := runtime.New(st, zap.NewNop(), runtime.WithCachedResource(testNS, typeD))
		require.NoError(t, err)
		var running atomic.Int32
		for _, name := range []string{"a", "b"} {
			require.NoError(t, rt.RegisterController(&funcController{name: name, inputs: []controller.Input{in(typeA, controller.InputWeak)},
				run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
					running.Add(1)
					defer running.Add(-1)
					<-ctx.Done()
					time.Sleep(100 * time.Millisecond) // a controller slow to stop
					return nil
				}}))
		}
		require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeB)}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		require.EqualValues(t, 2, running.Load())
		start := time.Now()
		cancel()
		require.NoError(t, <-done)
		assert.Equal(t, 100*time.Millisecond, time.Since(start), "Run waited for the slowest controller, no longer")
		assert.EqualValues(t, 0, running.Load())
		// synctest.Test fails if any goroutine of the bubble is left.
	})
}

// TestRegisterDuringRun_OnWatchedAndFreshKinds: controllers registered
// during Run on a kind that is watched already, or on one nobody watched,
// start at once and then see changes; a QController starts with what
// exists; registration rules still hold.
func TestRegisterDuringRun_OnWatchedAndFreshKinds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		opts := []runtimetest.Option{runtimetest.WithState(st)}
		mustCreate(t, st, newPair(typeA, "1", 1))
		mustCreate(t, st, newPair(typeA, "2", 2))
		first := newEventCounter(false)
		opts = append(opts, runtimetest.WithControllers(&funcController{name: "first", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: first.run}))
		e := start(t, opts...)
		assert.Equal(t, 1, first.count())

		// A Controller registered during Run on an already watched kind:
		// one start event, then it sees changes.
		late := newEventCounter(false)
		require.NoError(t, e.Runtime.RegisterController(&funcController{name: "late", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: late.run}))
		synctest.Wait()
		assert.Equal(t, 1, late.count())

		// A QController registered during Run on an already watched kind
		// starts with every existing primary resource (rule Q1).
		log := &callLog{}
		require.NoError(t, e.Runtime.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return nil
			}}))
		synctest.Wait()
		assert.ElementsMatch(t, []string{"1", "2"}, ids(log.take()))

		// A Controller registered during Run on a kind nobody watched.
		fresh := newEventCounter(false)
		require.NoError(t, e.Runtime.RegisterController(&funcController{name: "fresh", inputs: []controller.Input{in(typeC, controller.InputWeak)}, run: fresh.run}))
		synctest.Wait()
		assert.Equal(t, 1, fresh.count())

		mustCreate(t, st, newPair(typeA, "3", 3))
		mustCreate(t, st, newPair(typeC, "1", 3))
		synctest.Wait()
		assert.Equal(t, 1, late.count())
		assert.Equal(t, 1, fresh.count())
		assert.Equal(t, []string{"3"}, ids(log.take()))

		// C1 holds during Run.
		err := e.Runtime.RegisterController(&funcController{name: "late"})
		assert.True(t, state.IsInvalidError(err))
	})
}

func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string][]runtime.Option{
		"uncached": nil,
		"cached":   {runtime.WithCachedResource(testNS, typeB), runtime.WithCachedResource(testNS, typeA)},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := inmem.NewState()
				c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputStrong)}, []controller.Output{out(typeB, controller.OutputExclusive)})
				mustCreate(t, st, newPair(typeA, "in", 1))
				start(t, runtimetest.WithState(st), runtimetest.WithRuntimeOptions(opts...), runtimetest.WithControllers(c))
				r := <-rts
				ctx := context.Background()

				for i := range 50 {
					require.NoError(t, r.Modify(ctx, newPair(typeB, "o", 0), func(res resource.Resource) error {
						res.(*Pair).TypedSpec().A = i
						return nil
					}))
					got, err := r.Get(ctx, ptr(typeB, "o"))
					require.NoError(t, err)
					require.Equal(t, i, specA(t, got), "Get after Modify %d", i)
					l, err := r.List(ctx, kind(typeB))
					require.NoError(t, err)
					require.Len(t, l.Items, 1)
					require.Equal(t, i, specA(t, l.Items[0]), "List after Modify %d", i)
				}
				require.NoError(t, r.Create(ctx, newPair(typeB, "created", 7)))
				got, err := r.Get(ctx, ptr(typeB, "created"))
				require.NoError(t, err)
				assert.Equal(t, 7, specA(t, got))
				assert.Equal(t, "c", got.Metadata().Owner())

				got.(*Pair).TypedSpec().A = 8
				require.NoError(t, r.Update(ctx, got))
				again, err := r.Get(ctx, ptr(typeB, "created"))
				require.NoError(t, err)
				assert.Equal(t, 8, specA(t, again))
				assert.Equal(t, got.Metadata().Version(), again.Metadata().Version())

				require.NoError(t, r.AddFinalizer(ctx, ptr(typeA, "in"), "c"))
				in, err := r.Get(ctx, ptr(typeA, "in"))
				require.NoError(t, err)
				assert.True(t, in.Metadata().Finalizers().Has("c"), "finalizer visible at once")

				_, err = r.Teardown(ctx, ptr(typeB, "created"))
				require.NoError(t, err)
				td, err := r.Get(ctx, ptr(typeB, "created"))
				require.NoError(t, err)
				assert.Equal(t, resource.PhaseTearingDown, td.Metadata().Phase())

				require.NoError(t, r.Destroy(ctx, ptr(typeB, "created")))
				_, err = r.Get(ctx, ptr(typeB, "created"))
				assert.True(t, state.IsNotFoundError(err), "destroyed at once: %v", err)
				l, err := r.List(ctx, kind(typeB))
				require.NoError(t, err)
				assert.Len(t, l.Items, 1)

				// Recreated: a new generation at version 1.
				require.NoError(t, r.Create(ctx, newPair(typeB, "created", 9)))
				got, err = r.Get(ctx, ptr(typeB, "created"))
				require.NoError(t, err)
				assert.Equal(t, 9, specA(t, got))

				// Once the watch caught up, the cache holds what the state does.
				synctest.Wait()
				want, err := st.List(ctx, kind(typeB))
				require.NoError(t, err)
				have, err := r.List(ctx, kind(typeB))
				require.NoError(t, err)
				require.Len(t, have.Items, len(want.Items))
				for i := range want.Items {
					assert.True(t, resource.Equal(want.Items[i], have.Items[i]), "%s", resource.String(want.Items[i]))
				}
			})
		})
	}
}

// countingState counts the Get and List calls that reach the state.
type countingState struct {
	state.State
	reads atomic.Int64
}

func (s *countingState) Get(ctx context.Context, p resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	s.reads.Add(1)
	return s.State.Get(ctx, p, opts...)
}

func (s *countingState) List(ctx context.Context, k resource.Kind, opts ...state.ListOption) (resource.List, error) {
	s.reads.Add(1)
	return s.State.List(ctx, k, opts...)
}

func TestCachedResource_ReadsServedFromCache(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		cs := &countingState{State: st}
		mustCreate(t, st, newPair(typeA, "1", 1))
		mustCreate(t, st, newPair(typeA, "2", 2))
		rts := make(chan controller.Runtime, 1)
		c := &funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				rts <- r
				<-ctx.Done()
				return nil
			}}
		start(t, runtimetest.WithState(cs), runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeA)), runtimetest.WithControllers(c))
		r := <-rts
		ctx := context.Background()
		before := cs.reads.Load()
		l, err := r.List(ctx, kind(typeA), state.WithLabelQuery(resource.LabelExists("x", resource.NotMatches)))
		require.NoError(t, err)
		assert.Len(t, l.Items, 2)
		got, err := r.Get(ctx, ptr(typeA, "2"))
		require.NoError(t, err)
		assert.Equal(t, 2, specA(t, got))
		got.(*Pair).TypedSpec().A = 100 // a copy: the cache is not changed
		again, err := r.Get(ctx, ptr(typeA, "2"))
		require.NoError(t, err)
		assert.Equal(t, 2, specA(t, again))
		_, err = r.Get(ctx, ptr(typeA, "missing"))
		assert.True(t, state.IsNotFoundError(err))
		assert.Equal(t, before, cs.reads.Load(), "cached reads do not reach the state")

		require.NoError(t, st.Destroy(ctx, ptr(typeA, "1")))
		synctest.Wait()
		l, err = r.List(ctx, kind(typeA))
		require.NoError(t, err)
		assert.Len(t, l.Items, 1, "the cache follows the watch")
	})
}

// slowBootstrapState relays the kind watches of one type one event per
// batch, each batch only when the test releases it, so that a test can act
// while the first bootstrap of that kind is on its way.
type slowBootstrapState struct {
	state.State
	typ     resource.Type
	release chan struct{} // one receive per relayed batch
}

func (s *slowBootstrapState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if k.Type() != s.typ {
		return s.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	inner := make(chan []state.Event)
	if err := s.State.WatchKindAggregated(ctx, k, inner, opts...); err != nil {
		return err
	}
	go func() {
		for {
			var batch []state.Event
			select {
			case <-ctx.Done():
				return
			case batch = <-inner:
			}
			for _, ev := range batch {
				select {
				case <-ctx.Done():
					return
				case <-s.release:
				}
				select {
				case ch <- []state.Event{ev}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return nil
}

// TestRegisterDuringABootstrap_EachResourceOnce: a
// QController registered during Run while the first bootstrap of its
// primary kind is on its way (not started, or partly delivered) gets every
// existing resource exactly once (rule Q1), not once from the bootstrap and
// once more from a list.
func TestRegisterDuringABootstrap_EachResourceOnce(t *testing.T) {
	t.Parallel()
	for _, before := range []int{0, 1, 2} { // bootstrap events delivered before the registration
		t.Run(map[int]string{0: "none delivered", 1: "one delivered", 2: "two delivered"}[before], func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := &slowBootstrapState{State: inmem.NewState(), typ: typeA, release: make(chan struct{})}
				for _, id := range []string{"1", "2", "3"} {
					mustCreate(t, st, newPair(typeA, id, 0))
				}
				rt, err := runtime.New(st, zap.NewNop())
				require.NoError(t, err)
				started := make(chan struct{})
				require.NoError(t, rt.RegisterController(&funcController{name: "watcher", inputs: []controller.Input{in(typeA, controller.InputWeak)}}))
				require.NoError(t, rt.RegisterController(&funcController{name: "signal", run: func(ctx context.Context, _ controller.Runtime, _ *zap.Logger) error {
					close(started)
					<-ctx.Done()
					return nil
				}}))
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- rt.Run(ctx) }()
				<-started // Run runs: the watch of A is started, its bootstrap held back
				for range before {
					st.release <- struct{}{}
				}
				synctest.Wait()

				log := &callLog{}
				require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
					reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
						log.add(p.ID())
						return nil
					}}))
				synctest.Wait()
				// The rest of the bootstrap (3 Created, 1 Bootstrapped).
				for range 4 - before {
					st.release <- struct{}{}
					synctest.Wait()
				}
				assert.ElementsMatch(t, []string{"1", "2", "3"}, ids(log.take()), "each existing resource reconciled once")

				mustCreate(t, st, newPair(typeA, "4", 0))
				st.release <- struct{}{}
				synctest.Wait()
				assert.Equal(t, []string{"4"}, ids(log.take()), "then changes")
				cancel()
				require.NoError(t, <-done)
			})
		})
	}
}
