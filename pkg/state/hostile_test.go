package state_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// hostileCore is a working CoreState (inmem's, used through its core
// methods) whose single-resource watches misbehave after sending the
// resource's current state first (rule S8) — or at once, with now — the way
// the misbehaviour says. It is what a buggy foreign backend looks like to
// WrapCore.
type hostileCore struct {
	state.CoreState
	// misbehave sends (or does) something bad on ch after the honest part;
	// it returns when done or when ctx is.
	misbehave func(ctx context.Context, ch chan<- state.Event)
	// now skips the honest first event.
	now bool
	// nilGet makes Get return no resource and no error.
	nilGet atomic.Bool
}

func (h *hostileCore) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if h.nilGet.Load() {
		return nil, nil
	}
	return h.CoreState.Get(ctx, ptr, opts...)
}

func (h *hostileCore) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	inner := make(chan state.Event, 1)
	wctx, cancel := context.WithCancel(ctx)
	if err := h.CoreState.Watch(wctx, ptr, inner, opts...); err != nil {
		cancel()
		return err
	}
	go func() {
		defer cancel()
		if !h.now {
			select {
			case ev := <-inner:
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
		h.misbehave(ctx, ch)
	}()
	return nil
}

// trap is a resource whose Metadata panics.
type trap struct{ md resource.Metadata }

func (t *trap) Metadata() *resource.Metadata { panic("Metadata boom") }
func (t *trap) Spec() any                    { return nil }
func (t *trap) DeepCopy() resource.Resource  { return &trap{md: t.md.Copy()} }

// noMetadata is a resource without metadata.
type noMetadata struct{}

func (noMetadata) Metadata() *resource.Metadata { return nil }
func (noMetadata) Spec() any                    { return nil }
func (noMetadata) DeepCopy() resource.Resource  { return noMetadata{} }

// panickyErr is an error whose Error method panics.
type panickyErr struct{}

func (panickyErr) Error() string { panic("Error boom") }

// sendThenBlock sends ev and then keeps the stream open, sending nothing.
func sendThenBlock(ev state.Event) func(context.Context, chan<- state.Event) {
	return func(ctx context.Context, ch chan<- state.Event) {
		select {
		case ch <- ev:
		case <-ctx.Done():
		}
	}
}

func closeStream(_ context.Context, ch chan<- state.Event) { close(ch) }

func sendNothing(context.Context, chan<- state.Event) {}

// misbehaviours are the ways a foreign core's watch breaks, with what the
// helpers' error (or the context's cause) then says.
var misbehaviours = []struct {
	name string
	bad  func(context.Context, chan<- state.Event)
	want string
}{
	{"stream closed", closeStream, "watch stream closed by the state"},
	{"change without a resource", sendThenBlock(state.Event{Type: state.Updated}), "an event of type Updated with no resource (<nil>)"},
	{"typed-nil resource", sendThenBlock(state.Event{Type: state.Updated, Resource: (*num)(nil)}), "an event of type Updated with no resource (*typed.Resource"},
	{"Metadata panics", sendThenBlock(state.Event{Type: state.Updated, Resource: &trap{}}), "Metadata panicked: Metadata boom"},
	{"no metadata", sendThenBlock(state.Event{Type: state.Destroyed, Resource: noMetadata{}}), "an event of type Destroyed with a state_test.noMetadata without metadata"},
	{"another resource", sendThenBlock(state.Event{Type: state.Updated, Resource: newNum("other", 1)}), "the resource Nums.test.resgraph.dev(default/other)"},
	{"Errored without an error", sendThenBlock(state.Event{Type: state.Errored}), "errored event without an error"},
	{"Errored with a panicking error", sendThenBlock(state.Event{Type: state.Errored, Error: panickyErr{}}), "Error panicked: Error boom"},
}

// hostileSetup returns a WrapCore over a hostile core holding resource "a",
// misbehaving with bad (after the current state, unless now).
// The resource has a finalizer, so that TeardownAndDestroy waits on its
// watch.
func hostileSetup(t *testing.T, bad func(context.Context, chan<- state.Event), now bool) (*hostileCore, state.State, context.Context) {
	t.Helper()
	core := &hostileCore{CoreState: inmem.NewState(), misbehave: bad, now: now}
	a := newNum("a", 1)
	a.Metadata().Finalizers().Add("f")
	require.NoError(t, core.Create(t.Context(), a))
	return core, state.WrapCore(core), t.Context()
}

// TestWrapCore_HostileWatchIsAFailure: over a core whose watch closes its
// stream, sends an Errored event or a change event without a usable
// resource, WatchFor and TeardownAndDestroy return an error that says so,
// and ContextWithTeardown's context is canceled with it as the cause.
// Issue 14: a closed stream made ContextWithTeardown's goroutine and
// TeardownAndDestroy dereference a nil resource (a crash), and WatchFor
// spin at 100 % CPU until its context ended.
func TestWrapCore_HostileWatchIsAFailure(t *testing.T) {
	for _, m := range misbehaviours {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, st, ctx := hostileSetup(t, m.bad, false)
				ctx, cancel := context.WithTimeout(ctx, time.Hour) // virtual: a spin would reach it
				defer cancel()

				_, err := st.WatchFor(ctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
				require.Error(t, err)
				assert.NotErrorIs(t, err, context.DeadlineExceeded, "WatchFor ends with the watch, not its context")
				assert.ErrorContains(t, err, m.want)
				assert.ErrorContains(t, err, "resource Nums.test.resgraph.dev(default/a): watch failed: ")

				tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
				require.NoError(t, err)
				<-tctx.Done()
				assert.NotErrorIs(t, context.Cause(tctx), context.DeadlineExceeded)
				assert.ErrorContains(t, context.Cause(tctx), m.want)

				err = st.TeardownAndDestroy(ctx, ptrOf("a"))
				require.Error(t, err)
				assert.NotErrorIs(t, err, context.DeadlineExceeded)
				assert.ErrorContains(t, err, m.want)
			})
		})
	}
}

// TestWrapCore_HostileWatchFromTheStart: the same misbehaviours as the
// first thing the watch sends (no current state) fail ContextWithTeardown's
// synchronous decision the same way.
func TestWrapCore_HostileWatchFromTheStart(t *testing.T) {
	for _, m := range misbehaviours {
		t.Run(m.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, st, ctx := hostileSetup(t, m.bad, true)
				tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
				require.NoError(t, err)
				require.Error(t, tctx.Err(), "canceled on return")
				assert.ErrorContains(t, context.Cause(tctx), m.want)
			})
		})
	}
}

// TestWrapCore_ClosedStreamWrapsErrWatchClosed: a closed stream is told
// apart with errors.Is; an Errored event's error stays reachable.
func TestWrapCore_ClosedStreamWrapsErrWatchClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, st, ctx := hostileSetup(t, closeStream, false)
		_, err := st.WatchFor(ctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
		assert.ErrorIs(t, err, state.ErrWatchClosed)

		overrun := state.NewBufferOverrunError(nil, "lost track")
		_, st, ctx = hostileSetup(t, sendThenBlock(state.Event{Type: state.Errored, Error: overrun}), false)
		_, err = st.WatchFor(ctx, ptrOf("a"), state.WithPhases(resource.PhaseTearingDown))
		assert.True(t, state.IsBufferOverrunError(err), "%v", err)
		assert.Equal(t, "resource Nums.test.resgraph.dev(default/a): watch failed: lost track", err.Error())
	})
}

// TestWrapCore_GetReturningNothingIsAnError: a core whose Get returns no
// resource and no error makes the read-modify-write helpers fail with an
// error naming the resource, never panic.
func TestWrapCore_GetReturningNothingIsAnError(t *testing.T) {
	core, st, ctx := hostileSetup(t, sendNothing, false)
	core.nilGet.Store(true)
	const want = "resource Nums.test.resgraph.dev(default/a): the state's Get returned no resource (<nil>)"
	for name, call := range map[string]func() error{
		"Teardown": func() error { _, err := st.Teardown(ctx, ptrOf("a")); return err },
		"UpdateWithConflicts": func() error {
			_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), setN(2))
			return err
		},
		"Modify":          func() error { return st.Modify(ctx, newNum("a", 0), func(resource.Resource) error { return nil }) },
		"AddFinalizer":    func() error { return st.AddFinalizer(ctx, ptrOf("a"), "f") },
		"RemoveFinalizer": func() error { return st.RemoveFinalizer(ctx, ptrOf("a"), "f") },
	} {
		assert.EqualError(t, call(), want, name)
	}
}

// TestWrapCore_ContextWithTeardownParentEndsWhileWaiting: a parent context
// that ends before the resource's current state arrives gives its error
// and a done context.
func TestWrapCore_ContextWithTeardownParentEndsWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, st, ctx := hostileSetup(t, sendNothing, true)
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		tctx, err := st.ContextWithTeardown(ctx, ptrOf("a"))
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotNil(t, tctx)
		<-tctx.Done()
	})
}
