package runtime_test

import (
	"context"
	"sync"
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
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// faultyState forwards the kind watches of one type through a relay that
// the test can break: the relay stops forwarding and then either sends an
// Errored event (a buffer overrun, as a foreign State may) or closes the
// stream.
type faultyState struct {
	state.State
	typ   resource.Type
	close bool // close the stream instead of sending Errored
	// failCalls is the number of first WatchKindAggregated calls of typ
	// that fail; protected by mu.
	failCalls int

	mu sync.Mutex
	// breaks has one channel per relay started; protected by mu.
	breaks []chan struct{}
}

func (s *faultyState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if k.Type() != s.typ {
		return s.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	s.mu.Lock()
	if s.failCalls > 0 {
		s.failCalls--
		s.mu.Unlock()
		return state.NewBufferOverrunError(nil, "injected watch call failure")
	}
	s.mu.Unlock()
	inner := make(chan []state.Event)
	wctx, cancel := context.WithCancel(ctx)
	if err := s.State.WatchKindAggregated(wctx, k, inner, opts...); err != nil {
		cancel()
		return err
	}
	brk := make(chan struct{})
	s.mu.Lock()
	s.breaks = append(s.breaks, brk)
	s.mu.Unlock()
	go func() {
		defer cancel()
		for {
			select {
			case <-ctx.Done():
				return
			case <-brk:
				if s.close {
					close(ch)
					return
				}
				select {
				case ch <- []state.Event{{Type: state.Errored, Error: state.NewBufferOverrunError(nil, "injected overrun")}}:
				case <-ctx.Done():
				}
				return
			case b := <-inner:
				select {
				case ch <- b:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return nil
}

// breakLatest breaks the most recent relay.
func (s *faultyState) breakLatest() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.breaks[len(s.breaks)-1])
}

func TestWatchFailure_RelistRoutesWhatChanged(t *testing.T) {
	t.Parallel()
	for name, closeStream := range map[string]bool{"errored event": false, "closed stream": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				fs := &faultyState{State: inmem.NewState(), typ: typeA, close: closeStream}
				core, logs := observer.New(zapcore.DebugLevel)
				rt, err := runtime.New(fs, zap.New(core), runtime.WithCachedResource(testNS, typeA))
				require.NoError(t, err)
				ctx := context.Background()
				for _, id := range []string{"keep", "changed", "gone"} {
					mustCreate(t, fs, newPair(typeA, id, 1))
				}
				log := &callLog{}
				require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
					reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
						log.add(p.ID())
						return nil
					}}))
				ec := newEventCounter(false)
				rts := make(chan controller.Runtime, 1)
				require.NoError(t, rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
					run: func(ctx context.Context, r controller.Runtime, l *zap.Logger) error {
						rts <- r
						return ec.run(ctx, r, l)
					}}))
				runCtx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- rt.Run(runCtx) }()
				synctest.Wait()
				r := <-rts
				assert.ElementsMatch(t, []string{"keep", "changed", "gone"}, ids(log.take()))
				assert.Equal(t, 1, ec.count())

				// Break the watch; change the kind while it is down.
				fs.breakLatest()
				synctest.Wait()
				require.NoError(t, fs.Modify(ctx, newPair(typeA, "changed", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 2; return nil }))
				require.NoError(t, fs.Destroy(ctx, ptr(typeA, "gone")))
				mustCreate(t, fs, newPair(typeA, "new", 1))
				synctest.Wait()
				assert.Empty(t, log.take(), "nothing is seen while the watch is down")

				time.Sleep(time.Second) // the re-watch backoff
				synctest.Wait()
				assert.ElementsMatch(t, []string{"changed", "gone", "new"}, ids(log.take()), "exactly what changed is routed")
				assert.Equal(t, 1, ec.count(), "the controller is woken")

				// The cache follows the re-list.
				l, err := r.List(ctx, kind(typeA))
				require.NoError(t, err)
				var got []string
				for _, it := range l.Items {
					got = append(got, it.Metadata().ID()+"="+string(rune('0'+specA(t, it))))
				}
				assert.Equal(t, []string{"changed=2", "keep=1", "new=1"}, got)

				// The Runtime keeps working after the re-list.
				mustCreate(t, fs, newPair(typeA, "later", 1))
				synctest.Wait()
				assert.Equal(t, []string{"later"}, ids(log.take()))

				assert.Len(t, logs.FilterMessage("kind watch failed; re-listing").All(), 1)
				var relists uint64
				for _, k := range rt.Observe().Metrics().Kinds {
					if k.Type == typeA {
						relists = k.Relists
					}
				}
				assert.EqualValues(t, 1, relists)

				cancel()
				require.NoError(t, <-done)
			})
		})
	}
}

func TestWatchFailure_FailedWatchCallIsRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fs := &faultyState{State: inmem.NewState(), typ: typeA, failCalls: 3}
		rt, err := runtime.New(fs, zap.NewNop())
		require.NoError(t, err)
		mustCreate(t, fs, newPair(typeA, "1", 1))
		ec := newEventCounter(false)
		require.NoError(t, rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: ec.run}))
		log := &callLog{}
		require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return nil
			}}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		assert.Equal(t, 0, ec.count(), "the start event waits for the watch")
		time.Sleep(time.Minute)
		assert.Equal(t, 1, ec.count(), "one start event once the watch is up")
		assert.Equal(t, []string{"1"}, ids(log.take()))
		mustCreate(t, fs, newPair(typeA, "2", 1))
		synctest.Wait()
		assert.Equal(t, 1, ec.count())
		assert.Equal(t, []string{"2"}, ids(log.take()))
		assert.EqualValues(t, 3, rt.Observe().Metrics().Kinds[0].Relists)
		cancel()
		require.NoError(t, <-done)
	})
}

// TestWatchFailure_ReestablishedWithTheBackoff: a kind watch that cannot
// be established is retried after the Runtime's one backoff (50 ms, then
// twice as long each time, without jitter); one that was up and failed
// starts over from 50 ms.
func TestWatchFailure_ReestablishedWithTheBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		fs := &faultyState{State: inmem.NewState(), typ: typeA, failCalls: 5}
		core, logs := observer.New(zapcore.WarnLevel)
		rt, err := runtime.New(fs, zap.New(core))
		require.NoError(t, err)
		ec := newEventCounter(false)
		require.NoError(t, rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)}, run: ec.run}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		time.Sleep(time.Minute)
		require.Equal(t, 1, ec.count(), "the watch is up")
		fs.breakLatest()
		time.Sleep(time.Minute)

		var delays, gaps []time.Duration
		entries := logs.FilterMessage("kind watch failed; re-listing").All()
		for i, e := range entries {
			delays = append(delays, e.ContextMap()["retry_in"].(time.Duration))
			if i > 0 && i < 5 {
				gaps = append(gaps, e.Time.Sub(entries[i-1].Time))
			}
		}
		ms := time.Millisecond
		assert.Equal(t, []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 50 * ms}, delays)
		assert.Equal(t, delays[:4], gaps, "each retry waited its delay")
		cancel()
		require.NoError(t, <-done)
	})
}

// cutBootstrapState cuts the first kind watch of one type short: it relays
// the first event of its bootstrap, then an Errored event. Later watches
// are the state's.
type cutBootstrapState struct {
	state.State
	typ resource.Type

	mu  sync.Mutex
	cut bool // the first watch was cut; protected by mu
}

func (s *cutBootstrapState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	s.mu.Lock()
	first := k.Type() == s.typ && !s.cut
	s.cut = s.cut || first
	s.mu.Unlock()
	if !first {
		return s.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	inner := make(chan []state.Event, 1)
	wctx, cancel := context.WithCancel(ctx)
	if err := s.State.WatchKindAggregated(wctx, k, inner, opts...); err != nil {
		cancel()
		return err
	}
	go func() {
		defer cancel()
		var batch []state.Event
		select {
		case batch = <-inner:
		case <-ctx.Done():
			return
		}
		for _, b := range [][]state.Event{batch[:1], {{Type: state.Errored, Error: state.NewBufferOverrunError(nil, "injected overrun")}}} {
			select {
			case ch <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// TestWatchFailure_FirstBootstrapCutShortStartsOver: a first bootstrap that
// fails half way is dropped: the retried watch's bootstrap is routed as the
// first one, so QControllers queue each existing resource once and
// Controllers and the cache see only what exists then.
func TestWatchFailure_FirstBootstrapCutShortStartsOver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := &cutBootstrapState{State: inmem.NewState(), typ: typeA}
		for _, id := range []string{"1", "2", "3"} {
			mustCreate(t, st, newPair(typeA, id, 0))
		}
		rt, err := runtime.New(st, zap.NewNop(), runtime.WithCachedResource(testNS, typeA))
		require.NoError(t, err)
		log := &callLog{}
		require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return nil
			}}))
		listed := make(chan []string, 16)
		require.NoError(t, rt.RegisterController(&funcController{name: "c", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					l, err := r.List(ctx, kind(typeA))
					if err != nil {
						return err
					}
					var got []string
					for _, res := range l.Items {
						got = append(got, res.Metadata().ID())
					}
					listed <- got
				}
			}}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait() // the first watch failed; the retry waits its backoff
		assert.Empty(t, log.take(), "nothing of a cut bootstrap is routed")
		require.NoError(t, st.Destroy(context.Background(), ptr(typeA, "2")))

		time.Sleep(time.Second)
		synctest.Wait()
		assert.ElementsMatch(t, []string{"1", "3"}, ids(log.take()), "each resource of the retried bootstrap, once")
		assert.Equal(t, []string{"1", "3"}, <-listed, "the start event comes after the retried bootstrap; the cache holds what exists")
		assert.Empty(t, listed, "one start event")
		assert.EqualValues(t, 1, rt.Observe().Metrics().Kinds[0].Relists)
		cancel()
		require.NoError(t, <-done)
	})
}
