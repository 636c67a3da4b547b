package state_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// testFence is a fence that stands until it is knocked down.
type testFence struct {
	name string
	down atomic.Bool
}

func (f *testFence) String() string { return "fence " + f.name }

// fencingCore is a fakeCore that checks the fences of its writes: a write
// under a fence that is down fails with a fenced error and writes
// nothing. It counts the writes it saw under each fence.
type fencingCore struct {
	*fakeCore
	mu   sync.Mutex
	seen map[state.Fence]int // guarded by mu
}

func (c *fencingCore) CheckFence(f state.Fence) error {
	if _, ok := f.(*testFence); !ok {
		return state.NewInvalidError(nil, "not a test fence: %T", f)
	}
	return nil
}

// fenced checks the fence of a write's context.
func (c *fencingCore) fenced(ctx context.Context, ptr resource.Pointer) error {
	f := state.FenceOf(ctx)
	if f == nil {
		return nil
	}
	c.mu.Lock()
	c.seen[f]++
	c.mu.Unlock()
	if f.(*testFence).down.Load() {
		return state.NewFencedError(ptr, "%v is down", f)
	}
	return nil
}

func (c *fencingCore) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	if err := c.fenced(ctx, r.Metadata()); err != nil {
		return err
	}
	return c.fakeCore.Create(ctx, r, opts...)
}

func (c *fencingCore) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	if err := c.fenced(ctx, r.Metadata()); err != nil {
		return err
	}
	return c.fakeCore.Update(ctx, r, opts...)
}

func (c *fencingCore) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	if err := c.fenced(ctx, ptr); err != nil {
		return err
	}
	return c.fakeCore.Destroy(ctx, ptr, opts...)
}

func (c *fencingCore) seenUnder(f state.Fence) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[f]
}

// TestFence_Context: WithFence puts a fence in a context and FenceOf
// finds it (through derived contexts); no fence is nil.
func TestFence_Context(t *testing.T) {
	ctx := context.Background()
	assert.Nil(t, state.FenceOf(ctx))
	assert.Equal(t, ctx, state.WithFence(ctx, nil), "a nil fence is no fence")
	f := &testFence{name: "a"}
	fctx, cancel := context.WithCancel(state.WithFence(ctx, f))
	defer cancel()
	assert.Same(t, f, state.FenceOf(fctx))
}

// TestFence_ErrorClass: a fenced error is of the fenced class (through
// wrapping), and of no other: no helper retries it as a conflict.
func TestFence_ErrorClass(t *testing.T) {
	err := state.NewFencedError(ptrOf("a"), "term %d ended", 3)
	assert.True(t, state.IsFencedError(err))
	assert.True(t, state.IsFencedError(fmt.Errorf("write: %w", err)))
	assert.Contains(t, err.Error(), "term 3 ended")
	assert.Contains(t, err.Error(), resource.PointerString(ptrOf("a")))
	assert.False(t, state.IsConflictError(err))
	assert.False(t, state.IsInvalidError(err))
	assert.False(t, state.IsNotFoundError(err))
	assert.False(t, state.IsFencedError(state.NewConflictError(ptrOf("a"), "x")))
	assert.False(t, state.IsFencedError(nil))
}

// TestFence_WrapCoreForwardsTheCheck: a wrapped core that checks fences
// answers CheckFence; one that does not refuses every fence with an
// invalid-class error.
func TestFence_WrapCoreForwardsTheCheck(t *testing.T) {
	st := state.WrapCore(&fencingCore{fakeCore: newFakeCore(), seen: map[state.Fence]int{}})
	fc, ok := st.(state.Fencer)
	require.True(t, ok)
	assert.NoError(t, fc.CheckFence(&testFence{}))
	assert.True(t, state.IsInvalidError(fc.CheckFence(otherFence{})))

	plain, ok := state.WrapCore(newFakeCore()).(state.Fencer)
	require.True(t, ok)
	err := plain.CheckFence(&testFence{})
	assert.True(t, state.IsInvalidError(err))
	assert.Contains(t, err.Error(), "does not check fences")
}

type otherFence struct{}

func (otherFence) String() string { return "other" }

// TestFence_HelpersFenceTheirWrites: every helper of WrapCore makes its
// core writes with the caller's context, so under a fence that stands
// they write under it, and under one that is down each fails with the
// fenced error at its first write (not retried), having written
// nothing.
func TestFence_HelpersFenceTheirWrites(t *testing.T) {
	ops := map[string]func(ctx context.Context, st state.State) error{
		"Modify": func(ctx context.Context, st state.State) error {
			return st.Modify(ctx, newNum("a", 0), func(r resource.Resource) error { r.(*num).TypedSpec().N++; return nil })
		},
		"ModifyCreates": func(ctx context.Context, st state.State) error {
			_, err := st.ModifyWithResult(ctx, newNum("new", 0), func(r resource.Resource) error { r.(*num).TypedSpec().N = 7; return nil })
			return err
		},
		"UpdateWithConflicts": func(ctx context.Context, st state.State) error {
			_, err := st.UpdateWithConflicts(ctx, ptrOf("a"), setN(9))
			return err
		},
		"Teardown": func(ctx context.Context, st state.State) error {
			_, err := st.Teardown(ctx, ptrOf("a"))
			return err
		},
		"AddFinalizer":    func(ctx context.Context, st state.State) error { return st.AddFinalizer(ctx, ptrOf("a"), "f") },
		"RemoveFinalizer": func(ctx context.Context, st state.State) error { return st.RemoveFinalizer(ctx, ptrOf("b"), "f") },
		"TeardownAndDestroy": func(ctx context.Context, st state.State) error {
			return st.TeardownAndDestroy(ctx, ptrOf("a"))
		},
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			for _, down := range []bool{false, true} {
				core := &fencingCore{fakeCore: newFakeCore(), seen: map[state.Fence]int{}}
				st := state.WrapCore(core)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				require.NoError(t, core.Create(ctx, newNum("a", 1)))
				b := newNum("b", 1)
				b.Metadata().Finalizers().Add("f")
				require.NoError(t, core.Create(ctx, b))
				before := core.writeCount()

				f := &testFence{name: name}
				f.down.Store(down)
				err := op(state.WithFence(ctx, f), st)
				if !down {
					require.NoError(t, err)
					assert.Positive(t, core.seenUnder(f), "the writes were made under the fence")
					assert.Greater(t, core.writeCount(), before)
					continue
				}
				require.Error(t, err)
				assert.True(t, state.IsFencedError(err), "%v", err)
				assert.False(t, errors.Is(err, context.DeadlineExceeded))
				assert.Equal(t, 1, core.seenUnder(f), "one write tried, not retried")
				assert.Equal(t, before, core.writeCount(), "nothing written")
			}
		})
	}
}
