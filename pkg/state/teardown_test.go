package state_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// callKey tags the context of one TeardownAndDestroy call, so that a
// tracingCore can tell the calls' reads and writes apart.
type callKey struct{}

// call is what a tracingCore saw of one tagged call.
type call struct {
	gets atomic.Int32
	// firstFound is set when the call's first Get found the resource.
	firstFound atomic.Bool
	// beforeGet and beforeUpdate, when set, run before the n-th (from 1)
	// Get and before each Update of the call.
	beforeGet    func(n int32)
	beforeUpdate func()
}

// tracingCore is inmem's core with hooks per tagged call: it records
// whether each call's first read found the resource, and lets a test hold
// a call between its steps.
type tracingCore struct{ state.CoreState }

func (c tracingCore) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	cl, _ := ctx.Value(callKey{}).(*call)
	if cl == nil {
		return c.CoreState.Get(ctx, ptr, opts...)
	}
	n := cl.gets.Add(1)
	if cl.beforeGet != nil {
		cl.beforeGet(n)
	}
	r, err := c.CoreState.Get(ctx, ptr, opts...)
	if n == 1 && err == nil {
		cl.firstFound.Store(true)
	}
	return r, err
}

func (c tracingCore) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	if cl, _ := ctx.Value(callKey{}).(*call); cl != nil && cl.beforeUpdate != nil {
		cl.beforeUpdate()
	}
	return c.CoreState.Update(ctx, r, opts...)
}

// TestS4_TeardownAndDestroyIsIdempotent: a call that has seen the resource
// returns nil when someone else destroys it first — between its read and
// its teardown write, or between a conflicting write and its next read
// (issue 14: it returned not-found, although its goal was reached). A call
// on a resource absent at the call still gets not-found.
func TestS4_TeardownAndDestroyIsIdempotent(t *testing.T) {
	for _, tc := range []struct {
		name string
		// hold makes the call wait, at one of its steps, until destroyed
		// is closed (the other caller's destroy), and tells when it waits
		// there by closing waiting.
		hold func(cl *call, waiting, tornDown, destroyed chan struct{})
	}{
		{"destroyed between the read and the teardown write", func(cl *call, waiting, _, destroyed chan struct{}) {
			cl.beforeUpdate = func() { close(waiting); <-destroyed }
		}},
		{"destroyed after a conflicting teardown write, before the next read", func(cl *call, waiting, tornDown, destroyed chan struct{}) {
			cl.beforeUpdate = func() { close(waiting); <-tornDown } // its write then conflicts
			cl.beforeGet = func(n int32) {
				if n == 2 {
					<-destroyed
				}
			}
		}},
		{"destroyed after the call began, before its first read", func(cl *call, waiting, _, destroyed chan struct{}) {
			cl.beforeGet = func(n int32) {
				if n == 1 {
					close(waiting)
					<-destroyed
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core := tracingCore{inmem.NewState()}
			st := state.WrapCore(core)
			ctx := t.Context()
			require.NoError(t, st.Create(ctx, newNum("a", 1)))

			waiting, tornDown, destroyed := make(chan struct{}), make(chan struct{}), make(chan struct{})
			b := &call{}
			tc.hold(b, waiting, tornDown, destroyed)
			errB := make(chan error, 1)
			go func() { errB <- st.TeardownAndDestroy(context.WithValue(ctx, callKey{}, b), ptrOf("a")) }()
			<-waiting

			// The other caller tears the resource down and destroys it.
			_, err := st.Teardown(ctx, ptrOf("a"))
			require.NoError(t, err)
			close(tornDown)
			require.NoError(t, st.TeardownAndDestroy(ctx, ptrOf("a")))
			close(destroyed)

			assert.NoError(t, <-errB, "the resource existed at the call and is gone: the goal is reached")
		})
	}

	t.Run("absent at the call", func(t *testing.T) {
		st := inmem.NewState()
		err := st.TeardownAndDestroy(t.Context(), ptrOf("never"))
		assert.True(t, state.IsNotFoundError(err), "%v", err)
	})
}

// TestS4_ConcurrentTeardownAndDestroy: many callers of TeardownAndDestroy
// on each of many resources, all released at once: every call whose first
// read found the resource returns nil (the issue measured 2,082 not-founds
// in 6,000 such calls); a call may get not-found only when its first read
// found nothing — and then only if it began after the resource was
// destroyed, which these calls, released together, seldom do; every
// resource is gone.
func TestS4_ConcurrentTeardownAndDestroy(t *testing.T) {
	const resources, callers = 500, 6
	core := tracingCore{inmem.NewState()}
	st := state.WrapCore(core)
	ctx := t.Context()
	for i := range resources {
		require.NoError(t, st.Create(ctx, newNum(fmt.Sprint(i), i)))
	}
	calls := make([]*call, resources*callers)
	errs := make([]error, len(calls))
	start := make(chan struct{})
	var started, wg sync.WaitGroup
	for i := range calls {
		calls[i] = &call{}
		started.Add(1)
		wg.Go(func() {
			started.Done()
			<-start
			errs[i] = st.TeardownAndDestroy(context.WithValue(ctx, callKey{}, calls[i]), ptrOf(fmt.Sprint(i/callers)))
		})
	}
	started.Wait()
	close(start)
	wg.Wait()

	var found, notFound int
	for i, cl := range calls {
		switch {
		case cl.firstFound.Load():
			found++
			assert.NoError(t, errs[i], "call %d saw the resource", i)
		case state.IsNotFoundError(errs[i]):
			notFound++
		default:
			assert.NoError(t, errs[i], "call %d", i)
		}
	}
	l, err := st.List(ctx, resource.NewKind("default", "Nums.test.resgraph.dev"))
	require.NoError(t, err)
	assert.Empty(t, l.Items)
	t.Logf("%d calls: %d saw the resource (all returned nil), %d did not: %d got not-found, the others nil", len(calls), found, len(calls)-found, notFound)
}
