package gentest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// Specced is a test resource: one with a [Spec].
type Specced interface {
	resource.Resource
	TypedSpec() *Spec
}

// Create creates the resources in st, failing the test on an error.
func Create(tb testing.TB, st state.State, rs ...resource.Resource) {
	tb.Helper()
	for _, r := range rs {
		if err := st.Create(context.Background(), r); err != nil {
			tb.Fatalf("create %s: %v", resource.String(r), err)
		}
	}
}

// SetN sets the spec N of the resource ptr (retrying on conflicts).
func SetN[T Specced](tb testing.TB, st state.State, ptr resource.Pointer, n int, opts ...state.UpdateOption) {
	tb.Helper()
	_, err := safe.StateUpdateWithConflicts(context.Background(), st, ptr, func(r T) error {
		r.TypedSpec().N = n
		return nil
	}, opts...)
	if err != nil {
		tb.Fatalf("set N of %s: %v", resource.PointerString(ptr), err)
	}
}

// AwaitN waits until the resource ptr exists, is running and has spec N n,
// and returns it.
func AwaitN[T Specced](tb testing.TB, st state.State, ptr resource.Pointer, n int) T {
	tb.Helper()
	var res T
	Await(tb, st, []resource.Kind{resource.KindOf(ptr)}, func(ctx context.Context) (bool, string) {
		r, err := safe.StateGet[T](ctx, st, ptr)
		if err != nil {
			return false, err.Error()
		}
		res = r
		md := r.Metadata()
		if md.Phase() != resource.PhaseRunning || r.TypedSpec().N != n {
			return false, fmt.Sprintf("%s: N=%d, want %d", md, r.TypedSpec().N, n)
		}
		return true, ""
	})
	return res
}

// AwaitGone waits until the resource ptr does not exist.
func AwaitGone(tb testing.TB, st state.State, ptr resource.Pointer) {
	tb.Helper()
	Await(tb, st, []resource.Kind{resource.KindOf(ptr)}, func(ctx context.Context) (bool, string) {
		r, err := st.Get(ctx, ptr)
		if state.IsNotFoundError(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, r.Metadata().String() + " still exists"
	})
}

// AwaitMD waits until the resource ptr exists and cond holds on its
// metadata.
func AwaitMD(tb testing.TB, st state.State, ptr resource.Pointer, cond func(*resource.Metadata) bool) {
	tb.Helper()
	Await(tb, st, []resource.Kind{resource.KindOf(ptr)}, func(ctx context.Context) (bool, string) {
		r, err := st.Get(ctx, ptr)
		if err != nil {
			return false, err.Error()
		}
		return cond(r.Metadata()), r.Metadata().String()
	})
}

// Errors records the errors a controller under test returns, so that a
// test can wait for one. Build it with [NewErrors].
type Errors chan error

// NewErrors returns an empty [Errors] that keeps up to 256 errors not yet
// awaited (later ones are dropped).
func NewErrors() Errors { return make(Errors, 256) }

// Push records err, if not nil, and returns it.
func (e Errors) Push(err error) error {
	if err != nil {
		select {
		case e <- err:
		default:
		}
	}
	return err
}

// Await returns the first recorded error that satisfies match, and fails
// the test when none comes within DefaultTimeout.
func (e Errors) Await(tb testing.TB, match func(error) bool) error {
	tb.Helper()
	timeout := time.After(DefaultTimeout)
	for {
		select {
		case err := <-e:
			if match(err) {
				return err
			}
		case <-timeout:
			tb.Fatal("no matching error")
			return nil
		}
	}
}
