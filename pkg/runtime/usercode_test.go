package runtime_test

import (
	"context"
	"fmt"
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
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The tests of this file check the rule of the Runtime doc's "User code"
// section: no method of user code (a controller's, a resource's, an
// error's, a foreign state's) runs under a Runtime lock or outside a
// recovery, and a typed-nil error is a failure.

// myError is a user error type whose nil pointer is the classic typed nil.
type myError struct{ msg string }

func (e *myError) Error() string { return e.msg }

// panickyError is an error whose Error method panics.
type panickyError struct{}

func (panickyError) Error() string { panic("Error method boom") }

// unwrapPanics is an error whose Unwrap method panics (errors.As calls it).
type unwrapPanics struct{}

func (unwrapPanics) Error() string { return "unwrap panics" }
func (unwrapPanics) Unwrap() error { panic("Unwrap boom") }

// asPanics is an error whose As method panics (errors.As calls it).
type asPanics struct{}

func (asPanics) Error() string { return "as panics" }
func (asPanics) As(any) bool   { panic("As boom") }

// hostileError is an error user code may return that the Runtime must
// survive, with what the controller's last error then says: want for a
// QController item, wantRun (when set; want otherwise) for a Controller,
// whose Run error the Runtime does not unwrap.
type hostileError struct {
	name    string
	err     func() error
	want    string
	wantRun string
}

// hostileErrors are the hostile errors the tests return.
func hostileErrors() []hostileError {
	return []hostileError{
		{"typed-nil RequeueError", func() error {
			var rq *controller.RequeueError
			return rq
		}, "typed-nil error (*controller.RequeueError)", ""},
		{"typed-nil user error", func() error {
			var e *myError
			return e
		}, "typed-nil error (*runtime_test.myError)", ""},
		{"chain holding a typed-nil RequeueError", func() error {
			return fmt.Errorf("wrapped: %w", (*controller.RequeueError)(nil))
		}, "typed-nil *controller.RequeueError", "wrapped: <nil>"},
		{"Error panics", func() error { return panickyError{} }, "Error panicked: Error method boom", ""},
		{"Unwrap panics", func() error { return unwrapPanics{} }, "methods panicked: Unwrap boom", "unwrap panics"},
		{"As panics", func() error { return asPanics{} }, "methods panicked: As boom", "as panics"},
		{"RequeueError wrapping an error whose Error panics", func() error {
			return controller.NewRequeueError(panickyError{}, time.Second)
		}, "Error panicked: Error method boom", ""},
	}
}

// TestUserCode_HostileItemErrorsFailOnlyThatItem: whatever error Reconcile or
// MapInput returns — a typed nil (issue 14: a typed-nil *RequeueError
// crashed the process), an error whose Error, Unwrap or As panics — fails
// that item only: it is retried with its backoff, the other items go on,
// the last error says what happened, and the Runtime stops cleanly.
func TestUserCode_HostileItemErrorsFailOnlyThatItem(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileErrors() {
		for _, mapped := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/mapped=%v", tc.name, mapped), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					st := inmem.NewState()
					opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithRuntimeOptions(runtime.WithQueueBackoff(time.Second, time.Second))}
					reconciled := &callLog{}
					var hostileCalls atomic.Int32
					q := &funcQController{name: "q",
						settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}},
						reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
							reconciled.add(p.ID())
							if !mapped && p.ID() == "bad" {
								hostileCalls.Add(1)
								return tc.err()
							}
							return nil
						},
						mapInput: func(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
							hostileCalls.Add(1)
							return nil, tc.err()
						}}
					opts = append(opts, runtimetest.WithQControllers(q))
					e := start(t, opts...)
					if mapped {
						mustCreate(t, st, newPair(typeC, "bad", 0))
					} else {
						mustCreate(t, st, newPair(typeA, "bad", 0))
					}
					mustCreate(t, st, newPair(typeA, "good", 0))
					synctest.Wait()
					assert.Contains(t, ids(reconciled.take()), "good", "the other items go on")
					assert.EqualValues(t, 1, hostileCalls.Load())
					cs := statusOf(t, e.Runtime, "q")
					assert.Contains(t, cs.LastError, tc.want)
					assert.Equal(t, observe.LifecycleRunning, cs.Lifecycle)

					time.Sleep(time.Second)
					synctest.Wait()
					assert.EqualValues(t, 2, hostileCalls.Load(), "the failed item is retried after its backoff")
				})
			})
		}
	}
}

// TestUserCode_HostileRunErrorsRestartTheController: a Controller whose Run
// returns a typed-nil error (issue 14: the Runtime deadlocked, Error being
// called under the metrics lock) or an error whose Error panics (the
// process crashed) fails like any other: it is restarted after its
// backoff, its status says why, the statuses and Run's return are
// not blocked.
func TestUserCode_HostileRunErrorsRestartTheController(t *testing.T) {
	t.Parallel()
	for _, tc := range hostileErrors() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				rt, err := runtime.New(inmem.NewState(), zap.NewNop(), runtime.WithRestartBackoff(time.Second, time.Second))
				require.NoError(t, err)
				var runs atomic.Int32
				require.NoError(t, rt.RegisterController(&funcController{name: "c",
					run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
						if runs.Add(1) > 1 {
							<-ctx.Done()
							return nil
						}
						<-r.EventCh()
						return tc.err()
					}}))
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- rt.Run(ctx) }()
				synctest.Wait()
				cs := statusOf(t, rt, "c")
				assert.Equal(t, observe.LifecycleBackoff, cs.Lifecycle)
				want := tc.want
				if tc.wantRun != "" {
					want = tc.wantRun
				}
				assert.Contains(t, cs.LastError, want)
				assert.EqualValues(t, 1, cs.Metrics.Crashes)
				time.Sleep(time.Second)
				synctest.Wait()
				assert.EqualValues(t, 2, runs.Load(), "restarted after the backoff")
				assert.Equal(t, observe.LifecycleRunning, statusOf(t, rt, "c").Lifecycle)
				cancel()
				require.NoError(t, <-done)
			})
		})
	}
}

// TestUserCode_TypedNilErrorMessage: the exact text a typed-nil error from Run
// becomes, logged and shown as the last error.
func TestUserCode_TypedNilErrorMessage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.DebugLevel)
		rt, err := runtime.New(inmem.NewState(), zap.New(core), runtime.WithRestartBackoff(time.Minute, time.Minute))
		require.NoError(t, err)
		require.NoError(t, rt.RegisterController(&funcController{name: "c",
			run: func(context.Context, controller.Runtime, *zap.Logger) error {
				var e *myError
				return e
			}}))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		synctest.Wait()
		const want = "Run returned a typed-nil error (*runtime_test.myError)"
		assert.Equal(t, want, statusOf(t, rt, "c").LastError)
		entries := logs.FilterField(zap.String("error", want)).All()
		assert.Len(t, entries, 1, "%v", logs.All())
		cancel()
		require.NoError(t, <-done)
	})
}

// trapRes is a resource whose methods misbehave on demand: Metadata
// panics or returns nil, DeepCopy panics. Copies share the traps.
type trapRes struct {
	traps *traps
	md    resource.Metadata
	spec  int
}

// traps are the misbehaviours of trapRes values; set them after the
// resource is stored.
type traps struct {
	metadataPanics, metadataNil, deepCopyPanics atomic.Bool
}

func newTrapRes(tr *traps, typ resource.Type, id resource.ID) *trapRes {
	return &trapRes{traps: tr, md: resource.NewMetadata(testNS, typ, id, resource.VersionUndefined)}
}

func (r *trapRes) Metadata() *resource.Metadata {
	if r.traps.metadataPanics.Load() {
		panic("Metadata boom")
	}
	if r.traps.metadataNil.Load() {
		return nil
	}
	return &r.md
}

func (r *trapRes) Spec() any { return r.spec }

func (r *trapRes) DeepCopy() resource.Resource {
	if r.traps.deepCopyPanics.Load() {
		panic("DeepCopy boom")
	}
	return &trapRes{traps: r.traps, md: r.md.Copy(), spec: r.spec}
}

// badEventState is a State whose kind watches of typ deliver, after their
// bootstrap, one batch made by bad (a misbehaving foreign state) for the
// first calls, then the real stream.
type badEventState struct {
	state.State
	typ resource.Type
	bad func() []state.Event

	mu sync.Mutex
	// left is the number of watches that still send the bad batch;
	// protected by mu.
	left int
}

func (s *badEventState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	s.mu.Lock()
	inject := k.Type() == s.typ && s.left > 0
	if inject {
		s.left--
	}
	s.mu.Unlock()
	if !inject {
		return s.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	go func() {
		select {
		case ch <- []state.Event{{Type: state.Bootstrapped}}:
		case <-ctx.Done():
			return
		}
		select {
		case ch <- s.bad():
		case <-ctx.Done():
		}
	}()
	return nil
}

// TestWatch_BadEventsFromAForeignStateAreWatchFailures: a change event that
// cannot be routed — without a resource, a typed-nil one, one whose
// Metadata panics or returns nil, one of another kind — fails the kind's
// watch, which is re-established with a re-list like any other watch
// failure; the Runtime neither crashes nor routes the bad event.
func TestWatch_BadEventsFromAForeignStateAreWatchFailures(t *testing.T) {
	t.Parallel()
	for name, bad := range map[string]func() []state.Event{
		"nil resource":       func() []state.Event { return []state.Event{{Type: state.Created}} },
		"typed-nil resource": func() []state.Event { return []state.Event{{Type: state.Updated, Resource: (*Pair)(nil)}} },
		"Metadata panics": func() []state.Event {
			return []state.Event{{Type: state.Created, Resource: trapped(func(tr *traps) { tr.metadataPanics.Store(true) })}}
		},
		"Metadata returns nil": func() []state.Event {
			return []state.Event{{Type: state.Destroyed, Resource: trapped(func(tr *traps) { tr.metadataNil.Store(true) })}}
		},
		"another kind": func() []state.Event { return []state.Event{{Type: state.Created, Resource: newPair(typeB, "x", 0)}} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				core, logs := observer.New(zapcore.DebugLevel)
				st := &badEventState{State: inmem.NewState(), typ: typeA, bad: bad, left: 1}
				rt, err := runtime.New(st, zap.New(core))
				require.NoError(t, err)
				reconciled := &callLog{}
				require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: primaryOf(typeA),
					reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
						reconciled.add(p.ID())
						return nil
					}}))
				mustCreate(t, st, newPair(typeA, "real", 0))
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan error, 1)
				go func() { done <- rt.Run(ctx) }()
				time.Sleep(time.Minute) // the re-list's backoff, in virtual time
				synctest.Wait()
				assert.Equal(t, []string{"real"}, ids(reconciled.take()), "the re-list routed the real contents, nothing of the bad event")
				failures := logs.FilterMessage("kind watch failed; re-listing").All()
				require.Len(t, failures, 1, "%v", logs.All())
				assert.Contains(t, failures[0].ContextMap()["error"], "the state sent a")
				assert.EqualValues(t, 1, rt.Observe().Metrics().Kinds[0].Relists)
				cancel()
				require.NoError(t, <-done)
			})
		})
	}
}

func trapped(set func(*traps)) *trapRes {
	tr := &traps{}
	r := newTrapRes(tr, typeA, "trap")
	set(tr)
	return r
}

// panickyState is a State whose WatchKindAggregated and List of typ panic
// for their first calls.
type panickyState struct {
	state.State
	typ         resource.Type
	watchPanics atomic.Int32
	listPanics  atomic.Int32
}

func (s *panickyState) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if k.Type() == s.typ && s.watchPanics.Add(-1) >= 0 {
		panic("WatchKindAggregated boom")
	}
	return s.State.WatchKindAggregated(ctx, k, ch, opts...)
}

func (s *panickyState) List(ctx context.Context, k resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if k.Type() == s.typ && s.listPanics.Add(-1) >= 0 {
		panic("List boom")
	}
	return s.State.List(ctx, k, opts...)
}

// TestWatch_PanickingForeignStateIsRetried: a foreign state whose
// WatchKindAggregated panics is a failed watch (retried), and one whose
// List panics when a QController registered during Run fills its queue is
// a failed fill (retried with the item backoff): neither crashes the Runtime.
func TestWatch_PanickingForeignStateIsRetried(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := &panickyState{State: inmem.NewState(), typ: typeA}
		st.watchPanics.Store(2)
		st.listPanics.Store(1)
		rt, err := runtime.New(st, zap.NewNop())
		require.NoError(t, err)
		reconciled := &callLog{}
		register := func(name string) {
			require.NoError(t, rt.RegisterQController(&funcQController{name: name, settings: primaryOf(typeA),
				reconcile: func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
					reconciled.add(p.ID())
					return nil
				}}))
		}
		register("before")
		mustCreate(t, st, newPair(typeA, "x", 0))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"x"}, ids(reconciled.take()), "the watch was retried until it worked")
		assert.EqualValues(t, 2, rt.Observe().Metrics().Kinds[0].Relists)

		register("during") // its fill lists the kind: the first List panics
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []string{"x"}, ids(reconciled.take()), "the fill was retried until it worked")
		assert.Contains(t, statusOf(t, rt, "during").LastError, "initial list of As.test.resgraph.dev(test) panicked: List boom")
		cancel()
		require.NoError(t, <-done)
	})
}

// TestCachedResource_DeepCopyPanicDoesNotWedgeTheCache: with a cached kind,
// a controller's Get copies the resource with its DeepCopy method, which is
// user code: a panic in it fails that controller (restarted), and never
// leaves the cache's lock held (the Runtime's next write of that kind would
// then block forever).
func TestCachedResource_DeepCopyPanicDoesNotWedgeTheCache(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		rt, err := runtime.New(st, zap.NewNop(), runtime.WithCachedResource(testNS, typeA), runtime.WithRestartBackoff(time.Hour, time.Hour))
		require.NoError(t, err)
		tr := &traps{}
		require.NoError(t, st.Create(t.Context(), newTrapRes(tr, typeA, "t")))
		var gets atomic.Int32
		proceed := make(chan struct{})
		require.NoError(t, rt.RegisterController(&funcController{name: "reader", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				<-r.EventCh()
				<-proceed
				gets.Add(1)
				_, err := r.Get(ctx, ptr(typeA, "t"))
				return err
			}}))
		writer, rts := captureRuntime("writer", nil, []controller.Output{out(typeA, controller.OutputShared)})
		require.NoError(t, rt.RegisterController(writer))
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- rt.Run(ctx) }()
		w := <-rts
		synctest.Wait() // the cache holds the resource
		tr.deepCopyPanics.Store(true)
		close(proceed)
		synctest.Wait()
		require.EqualValues(t, 1, gets.Load())
		assert.Contains(t, statusOf(t, rt, "reader").LastError, "DeepCopy boom", "the copy failed the reader")

		tr.deepCopyPanics.Store(false)
		wrote := make(chan error, 1)
		go func() { wrote <- w.Create(ctx, newPair(typeA, "new", 1)) }()
		synctest.Wait()
		select {
		case err := <-wrote:
			require.NoError(t, err)
		default:
			t.Fatal("a write of the cached kind is blocked: the cache's lock was left held")
		}
		cancel()
		require.NoError(t, <-done)
	})
}
