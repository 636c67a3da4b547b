package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// callLog records Reconcile calls: the ID and the (virtual) time.
type callLog struct {
	mu    sync.Mutex
	calls []call // protected by mu
}

type call struct {
	at time.Time
	id string
}

func (l *callLog) add(id string) {
	l.mu.Lock()
	l.calls = append(l.calls, call{id: id, at: time.Now()})
	l.mu.Unlock()
}

// ids returns the IDs called, in order, and forgets them.
func (l *callLog) take() []call {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

func ids(calls []call) []string {
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		out = append(out, c.id)
	}
	return out
}

func primaryOf(typ resource.Type) controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{in(typ, controller.InputQPrimary)}}
}

func TestQ1_InitialFillThenChangesAndDedup(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		log := &callLog{}
		gate := make(chan struct{})
		for i := range 5 {
			mustCreate(t, env.st, newPair(typeA, strconv.Itoa(i), i))
		}
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				if p.ID() == "busy" {
					<-gate
				}
				return nil
			}}))
		env.start(t)
		got := ids(log.take())
		slices.Sort(got)
		assert.Equal(t, []string{"0", "1", "2", "3", "4"}, got, "every existing primary resource once")

		// A pointer queued while being reconciled runs once more after.
		mustCreate(t, env.st, newPair(typeA, "busy", 0))
		synctest.Wait()
		assert.Equal(t, []string{"busy"}, ids(log.take()))
		for i := range 3 {
			require.NoError(t, env.st.Modify(context.Background(), newPair(typeA, "busy", 0), func(r resource.Resource) error {
				r.(*Pair).TypedSpec().A = i + 1
				return nil
			}))
		}
		synctest.Wait()
		gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, []string{"busy"}, ids(log.take()), "reconciled once more")
		gate <- struct{}{}
		synctest.Wait()
		assert.Empty(t, log.take())
	})
}

func TestQ1_QueuedWhileWaitingIsStoredOnce(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		log := &callLog{}
		gate := make(chan struct{})
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				if p.ID() == "blocker" {
					<-gate
				}
				return nil
			}}))
		env.start(t)
		mustCreate(t, env.st, newPair(typeA, "blocker", 0))
		synctest.Wait()
		// The only worker is busy: "w" waits in the queue while it changes
		// three times.
		mustCreate(t, env.st, newPair(typeA, "w", 0))
		for i := range 2 {
			require.NoError(t, env.st.Modify(context.Background(), newPair(typeA, "w", 0), func(r resource.Resource) error {
				r.(*Pair).TypedSpec().A = i + 1
				return nil
			}))
		}
		synctest.Wait()
		assert.Equal(t, 1, statusOf(t, env.rt, "q").QueueLen)
		assert.Equal(t, 1, statusOf(t, env.rt, "q").InFlight)
		gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, []string{"blocker", "w"}, ids(log.take()))
	})
}

func TestQ2_ConcurrencyAndExclusion(t *testing.T) {
	t.Parallel()
	for _, conc := range []uint{1, 3} {
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			t.Parallel()
			inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
				var mu sync.Mutex
				inFlight := map[string]bool{} // protected by mu
				maxPar, dup := 0, false       // protected by mu
				release := make(chan struct{})
				for i := range 6 {
					mustCreate(t, env.st, newPair(typeA, strconv.Itoa(i), 0))
				}
				s := primaryOf(typeA)
				s.Concurrency = optional.Some(conc)
				require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q", settings: s,
					reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
						mu.Lock()
						dup = dup || inFlight[p.ID()]
						inFlight[p.ID()] = true
						maxPar = max(maxPar, len(inFlight))
						mu.Unlock()
						<-release
						mu.Lock()
						delete(inFlight, p.ID())
						mu.Unlock()
						return nil
					}}))
				env.start(t)
				mu.Lock()
				assert.Equal(t, int(conc), len(inFlight), "exactly Concurrency items run at once")
				mu.Unlock()
				// Change every resource while some are in flight.
				for i := range 6 {
					require.NoError(t, env.st.Modify(context.Background(), newPair(typeA, strconv.Itoa(i), 0), func(r resource.Resource) error {
						r.(*Pair).TypedSpec().A++
						return nil
					}))
				}
				for {
					synctest.Wait()
					mu.Lock()
					n := len(inFlight)
					mu.Unlock()
					if n == 0 {
						break
					}
					for range n {
						release <- struct{}{}
					}
				}
				mu.Lock()
				defer mu.Unlock()
				assert.Equal(t, int(conc), maxPar)
				assert.False(t, dup, "one pointer reconciled twice at once")
			})
		})
	}
}

func TestQ3_FailureBackoffRequeueAndReset(t *testing.T) {
	t.Parallel()
	inBubble(t, []Option{WithQueueBackoff(time.Second, 4*time.Second)}, func(t *testing.T, env *bubbleEnv) {
		log := &callLog{}
		var mu sync.Mutex
		results := map[string][]error{} // per ID, the results of the next calls; protected by mu
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				mu.Lock()
				defer mu.Unlock()
				if len(results[p.ID()]) == 0 {
					return nil
				}
				err := results[p.ID()][0]
				results[p.ID()] = results[p.ID()][1:]
				return err
			}}))
		env.start(t)
		start := time.Now()
		fail := errors.New("fail")

		mu.Lock()
		results["f"] = []error{fail, fail, fail, fail, nil, fail}
		mu.Unlock()
		mustCreate(t, env.st, newPair(typeA, "f", 0))
		time.Sleep(time.Minute) // virtual time
		synctest.Wait()
		var offsets []time.Duration
		for _, c := range log.take() {
			offsets = append(offsets, c.at.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second}, offsets,
			"exponential backoff per item, capped; stops after a success")
		st := statusOf(t, env.rt, "q")
		assert.Equal(t, "Reconcile As.test.resgraph.dev(test/f): fail", st.LastError, "the last error names the call and the item")
		assert.EqualValues(t, 4, st.Requeues)

		// Success reset the backoff: the next failure waits the initial delay.
		start = time.Now()
		require.NoError(t, env.st.Modify(context.Background(), newPair(typeA, "f", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		time.Sleep(time.Minute)
		var again []time.Duration
		for _, c := range log.take() {
			again = append(again, c.at.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, time.Second}, again)

		// A RequeueError requeues after its interval; a negative one fails.
		start = time.Now()
		mu.Lock()
		results["r"] = []error{controller.NewRequeueInterval(10 * time.Second), controller.NewRequeueError(errors.New("wrapped"), 5*time.Second), controller.NewRequeueInterval(-time.Second)}
		mu.Unlock()
		mustCreate(t, env.st, newPair(typeA, "r", 0))
		time.Sleep(time.Minute)
		var req []time.Duration
		for _, c := range log.take() {
			req = append(req, c.at.Sub(start))
		}
		assert.Equal(t, []time.Duration{0, 10 * time.Second, 15 * time.Second, 16 * time.Second}, req)
		assert.Contains(t, statusOf(t, env.rt, "q").LastError, "negative requeue interval")

		// A change to an item waiting out a backoff runs it now.
		mu.Lock()
		results["b"] = []error{fail, fail, fail}
		mu.Unlock()
		mustCreate(t, env.st, newPair(typeA, "b", 0))
		time.Sleep(1500 * time.Millisecond) // two calls: 0 and 1s; the third is due at 3s
		assert.Len(t, log.take(), 2)
		require.NoError(t, env.st.Modify(context.Background(), newPair(typeA, "b", 0), func(r resource.Resource) error { r.(*Pair).TypedSpec().A = 1; return nil }))
		synctest.Wait()
		assert.Len(t, log.take(), 1, "the change ran the item at once")
	})
}

func TestQ3_RequeueWithoutErrorIsNotAFailure(t *testing.T) {
	t.Parallel()
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		var n atomic.Int32
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
				if n.Add(1) == 1 {
					return controller.NewRequeueInterval(time.Second)
				}
				return nil
			}}))
		env.start(t)
		mustCreate(t, env.st, newPair(typeA, "x", 0))
		time.Sleep(2 * time.Second)
		assert.EqualValues(t, 2, n.Load())
		assert.Empty(t, statusOf(t, env.rt, "q").LastError)
	})
}

func TestQ4_MappedInputs(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	inBubble(t, []Option{WithQueueBackoff(time.Second, time.Second)}, func(t *testing.T, env *bubbleEnv) {
		env.rt.logger = zap.New(core)
		log := &callLog{}
		mapFails := 1
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q",
			settings: controller.QSettings{
				Inputs: []controller.Input{
					in(typeA, controller.InputQPrimary),
					in(typeC, controller.InputQMapped),
					in(typeB, controller.InputQMappedDestroyReady),
				},
				Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
			},
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				return nil
			},
			mapInput: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
				switch {
				case p.ID() == "fails" && mapFails > 0:
					mapFails--
					return nil, errors.New("map failed")
				case p.ID() == "bad":
					return []resource.Pointer{ptr(typeA, "ok"), ptr(typeX, "nope")}, nil
				}
				return []resource.Pointer{ptr(typeA, "from-"+p.Type()[:1]+"-"+p.ID())}, nil
			}}))
		env.start(t)
		ctx := context.Background()

		mustCreate(t, env.st, newPair(typeC, "1", 0))
		synctest.Wait()
		assert.Equal(t, []string{"from-C-1"}, ids(log.take()), "a mapped change is reconciled through MapInput")

		mustCreate(t, env.st, newPair(typeC, "fails", 0))
		synctest.Wait()
		assert.Empty(t, log.take())
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"from-C-fails"}, ids(log.take()), "a MapInput failure is retried with backoff")

		// Destroy-ready: only own outputs, tearing down, without finalizers.
		mustCreate(t, env.st, newPair(typeB, "own", 0), state.WithCreateOwner("q"))
		require.NoError(t, env.st.AddFinalizer(ctx, ptr(typeB, "own"), "hold"))
		_, err := env.st.Teardown(ctx, ptr(typeB, "own"), state.WithTeardownOwner("q"))
		require.NoError(t, err)
		mustCreate(t, env.st, newPair(typeB, "foreign", 0))
		_, err = env.st.Teardown(ctx, ptr(typeB, "foreign"))
		require.NoError(t, err)
		synctest.Wait()
		assert.Empty(t, log.take())
		require.NoError(t, env.st.RemoveFinalizer(ctx, ptr(typeB, "own"), "hold"))
		synctest.Wait()
		assert.Equal(t, []string{"from-B-own"}, ids(log.take()))

		// Pointers of an undeclared kind: an error of the item, logged once
		// per kind; the valid ones are queued.
		mustCreate(t, env.st, newPair(typeC, "bad", 0))
		synctest.Wait()
		assert.Equal(t, []string{"ok"}, ids(log.take()))
		assert.Contains(t, statusOf(t, env.rt, "q").LastError, "Xs.test.resgraph.dev(test/nope)")
		time.Sleep(3 * time.Second) // retried: still bad, not logged again
		assert.Len(t, logs.FilterMessage("MapInput returned a pointer that is not of a primary input kind").All(), 1)
	})
}

func TestQ5_PanicFailsTheItemOnly(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	inBubble(t, []Option{WithQueueBackoff(time.Second, time.Second)}, func(t *testing.T, env *bubbleEnv) {
		env.rt.logger = zap.New(core)
		log := &callLog{}
		panics := 1
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
			reconcile: func(ctx context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				log.add(p.ID())
				if p.ID() == "boom" && panics > 0 {
					panics--
					panic("reconcile boom")
				}
				return nil
			},
			mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
				panic("map boom")
			}}))
		env.start(t)
		mustCreate(t, env.st, newPair(typeA, "boom", 0))
		mustCreate(t, env.st, newPair(typeA, "fine", 0))
		mustCreate(t, env.st, newPair(typeC, "m", 0))
		synctest.Wait()
		assert.ElementsMatch(t, []string{"boom", "fine"}, ids(log.take()))
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"boom"}, ids(log.take()), "the panicked item is retried")

		st := statusOf(t, env.rt, "q")
		assert.Equal(t, StateRunning, st.State)
		assert.GreaterOrEqual(t, st.Crashes, uint64(3))
		for _, msg := range []string{"Reconcile panicked; retrying after backoff", "MapInput panicked; retrying after backoff"} {
			entries := logs.FilterMessage(msg).All()
			require.NotEmpty(t, entries, msg)
			assert.Contains(t, entries[0].ContextMap()["stack"], "qcontroller_test", msg)
		}
	})
}

// TestE3_QControllerStartsAlikeBeforeAndDuringRun: a QController's queue
// starts the same whether it was registered before Run (its kinds then
// bootstrap with it) or during Run, on kinds that are watched already
// (rules E3, Q1, Q4): a primary input with an ID queues that ID only, and
// own outputs that are already destroy-ready go through MapInput.
func TestE3_QControllerStartsAlikeBeforeAndDuringRun(t *testing.T) {
	t.Parallel()
	for _, during := range []bool{false, true} {
		t.Run(map[bool]string{false: "before Run", true: "during Run"}[during], func(t *testing.T) {
			t.Parallel()
			inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
				ctx := context.Background()
				mustCreate(t, env.st, newPair(typeA, "x", 0))
				mustCreate(t, env.st, newPair(typeA, "y", 0))
				mustCreate(t, env.st, newPair(typeB, "ready", 0), state.WithCreateOwner("q"))
				_, err := env.st.Teardown(ctx, ptr(typeB, "ready"), state.WithTeardownOwner("q"))
				require.NoError(t, err)
				mustCreate(t, env.st, newPair(typeB, "running", 0), state.WithCreateOwner("q"))

				reconciled, mapped := &callLog{}, &callLog{}
				q := &funcQController{name: "q",
					settings: controller.QSettings{
						Inputs: []controller.Input{
							inID(typeA, "x", controller.InputQPrimary),
							in(typeB, controller.InputQMappedDestroyReady),
						},
						Outputs: []controller.Output{out(typeB, controller.OutputExclusive)},
					},
					reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
						reconciled.add(p.ID())
						return nil
					},
					mapInput: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
						mapped.add(p.ID())
						return nil, nil
					}}
				if during {
					// Another controller has both kinds watched already.
					require.NoError(t, env.rt.RegisterController(&funcController{name: "watcher",
						inputs: []controller.Input{in(typeA, controller.InputWeak), in(typeB, controller.InputWeak)}}))
					env.start(t)
					require.NoError(t, env.rt.RegisterQController(q))
				} else {
					require.NoError(t, env.rt.RegisterQController(q))
					env.start(t)
				}
				synctest.Wait()
				assert.Equal(t, []string{"x"}, ids(reconciled.take()), "Q1: the primary input's ID only")
				assert.Equal(t, []string{"ready"}, ids(mapped.take()), "Q4: the own output that is destroy-ready")
			})
		})
	}
}

// TestQ3_RequeueErrorLoggedAsFailureOnlyWhenWrapping: a RequeueError that
// wraps an error is logged like any retried failure (at warn level, with
// the error and the interval, and as the controller's last error); a plain
// requeue logs nothing above info and is no error.
func TestQ3_RequeueErrorLoggedAsFailureOnlyWhenWrapping(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	inBubble(t, nil, func(t *testing.T, env *bubbleEnv) {
		env.rt.logger = zap.New(core)
		var n atomic.Int32
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				switch n.Add(1) {
				case 1:
					return controller.NewRequeueInterval(time.Second)
				case 2:
					return controller.NewRequeueError(errors.New("disk on fire"), time.Second)
				}
				return nil
			}}))
		env.start(t)
		mustCreate(t, env.st, newPair(typeA, "x", 0))
		synctest.Wait()
		require.EqualValues(t, 1, n.Load())
		assert.Zero(t, logs.FilterLevelExact(zapcore.WarnLevel).Len()+logs.FilterLevelExact(zapcore.ErrorLevel).Len(),
			"a plain requeue is not a failure: %v", logs.All())
		assert.Empty(t, statusOf(t, env.rt, "q").LastError)

		time.Sleep(time.Second)
		synctest.Wait()
		require.EqualValues(t, 2, n.Load())
		failures := logs.FilterLevelExact(zapcore.WarnLevel).FilterFieldKey("error").All()
		require.Len(t, failures, 1, "a wrapping requeue is logged as a failure: %v", logs.All())
		assert.Contains(t, failures[0].ContextMap()["error"], "disk on fire")
		assert.Equal(t, time.Second, failures[0].ContextMap()["interval"])
		assert.Contains(t, statusOf(t, env.rt, "q").LastError, "disk on fire")

		time.Sleep(time.Second)
		synctest.Wait()
		assert.EqualValues(t, 3, n.Load())
	})
}

// TestQ4_NilPointerFromMapInputIsLoggedOnce: a nil pointer returned by
// MapInput is an error of the item like a pointer of an undeclared kind:
// logged once, not silently retried forever.
func TestQ4_NilPointerFromMapInputIsLoggedOnce(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.InfoLevel)
	inBubble(t, []Option{WithQueueBackoff(time.Second, time.Second)}, func(t *testing.T, env *bubbleEnv) {
		env.rt.logger = zap.New(core)
		reconciled := &callLog{}
		require.NoError(t, env.rt.RegisterQController(&funcQController{name: "q",
			settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
			reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
				reconciled.add(p.ID())
				return nil
			},
			mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
				return []resource.Pointer{nil, ptr(typeA, "ok"), (*resource.Metadata)(nil)}, nil
			}}))
		env.start(t)
		mustCreate(t, env.st, newPair(typeC, "m", 0))
		synctest.Wait()
		assert.Equal(t, []string{"ok"}, ids(reconciled.take()), "the valid pointer is queued")
		assert.Contains(t, statusOf(t, env.rt, "q").LastError, "<nil>")
		time.Sleep(3 * time.Second) // retried: still bad, not logged again
		entries := logs.FilterMessage("MapInput returned a pointer that is not of a primary input kind").All()
		require.Len(t, entries, 1, "logged once: %v", logs.All())
		assert.Equal(t, "<nil>", entries[0].ContextMap()["pointer"])
	})
}
