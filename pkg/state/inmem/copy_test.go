package inmem

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// runningSpec is the spec of the reproduction: a slice, no
// DeepCopy method.
type runningSpec struct{ Running []string }

type runningDef struct{}

func (runningDef) Definition() typed.Definition {
	return typed.Definition{Type: "Services.test.resgraph.dev", DefaultNamespace: testNS}
}

type running = typed.Resource[runningSpec, runningDef]

func runningPtr(id string) resource.Pointer {
	return resource.NewPointer(testNS, "Services.test.resgraph.dev", id)
}

// TestR2_CreatedSliceSpecDoesNotAlias is the regression test of the issue:
// a spec with a slice and no DeepCopy method, created, then mutated by the
// caller, must leave the stored resource unchanged (same value at version
// 1) and send no event.
func TestR2_CreatedSliceSpecDoesNotAlias(t *testing.T) {
	st, ctx := newTestState(t)
	ch := make(chan state.Event, 8)
	require.NoError(t, st.WatchKind(ctx, resource.NewKind(testNS, "Services.test.resgraph.dev"), ch))

	r := typed.NewDefault[runningSpec, runningDef]("svc", runningSpec{Running: []string{"a"}})
	require.NoError(t, st.Create(ctx, r))
	ev := recv(t, ch)
	require.Equal(t, state.Created, ev.Type)

	r.TypedSpec().Running[0] = "b"

	got, err := st.Get(ctx, runningPtr("svc"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, got.(*running).TypedSpec().Running, "the store holds what was created")
	assert.Equal(t, uint64(1), version(got))
	assert.Equal(t, []string{"a"}, ev.Resource.(*running).TypedSpec().Running, "the event holds what was created")
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %v", ev.Type)
	default:
	}

	// A Get result and an updater's copy are private too.
	got.(*running).TypedSpec().Running[0] = "c"
	_, err = st.UpdateWithConflicts(ctx, runningPtr("svc"), func(r resource.Resource) error {
		r.(*running).TypedSpec().Running = append(r.(*running).TypedSpec().Running, "d")
		return nil
	})
	require.NoError(t, err)
	again, err := st.Get(ctx, runningPtr("svc"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "d"}, again.(*running).TypedSpec().Running)
	assert.Equal(t, uint64(2), version(again))
}

// mutexSpec cannot be copied.
type mutexSpec struct {
	Items []string
	Mu    sync.Mutex
}

// TestR2_UncopyableSpecIsRefused: Create, Update and Modify of a resource
// whose spec cannot be deep-copied fail with an invalid-class error naming
// the spec type, and write nothing.
func TestR2_UncopyableSpecIsRefused(t *testing.T) {
	st, ctx := newTestState(t)
	r := typed.NewDefault[mutexSpec, runningDef]("m", mutexSpec{})
	err := st.Create(ctx, r)
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), "inmem.mutexSpec")
	var ce *typed.CopyError
	assert.ErrorAs(t, err, &ce)

	err = st.Update(ctx, r)
	assert.True(t, state.IsInvalidError(err) || state.IsNotFoundError(err), "%v", err)
	err = st.Modify(ctx, r, func(resource.Resource) error { return nil })
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)

	_, err = st.Get(ctx, runningPtr("m"))
	assert.True(t, state.IsNotFoundError(err), "nothing written: %v", err)
	list, err := st.List(ctx, resource.NewKind(testNS, "Services.test.resgraph.dev"))
	require.NoError(t, err)
	assert.Empty(t, list.Items)
}

// panickyResource is a resource whose DeepCopy panics.
type panickyResource struct {
	md  resource.Metadata
	err bool
}

func (p *panickyResource) Metadata() *resource.Metadata { return &p.md }
func (p *panickyResource) Spec() any                    { return nil }
func (p *panickyResource) DeepCopy() resource.Resource {
	if p.err {
		panic(errors.New("copy failed"))
	}
	panic("no copy")
}

// TestR2_PanickingDeepCopyIsAnInvalidError: a resource's DeepCopy is user
// code; when it panics the write fails with an invalid-class error and
// nothing is written, the state does not crash.
func TestR2_PanickingDeepCopyIsAnInvalidError(t *testing.T) {
	st, ctx := newTestState(t)
	for _, withErr := range []bool{false, true} {
		r := &panickyResource{md: resource.NewMetadata(testNS, testType, "p", resource.VersionUndefined), err: withErr}
		err := st.Create(ctx, r)
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), "panicked")
		_, err = st.Get(ctx, ptr("p"))
		assert.True(t, state.IsNotFoundError(err))
	}
}

// copyPanics embeds a typed resource of a plain spec (whose copy runs no
// user code) and has its own DeepCopy, user code, which panics.
type copyPanics struct{ *pair }

func (copyPanics) DeepCopy() resource.Resource { panic("the wrapper's DeepCopy") }

// TestR2_AWrapperOfAPlainResourceIsCopiedAsUserCode: a write copies a
// resource that embeds a typed one of a plain spec with its own DeepCopy,
// user code: its panic fails the write with an invalid error, and nothing
// is written.
func TestR2_AWrapperOfAPlainResourceIsCopiedAsUserCode(t *testing.T) {
	st, ctx := newTestState(t)
	err := st.Create(ctx, copyPanics{newPair("w", 1)})
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "the wrapper's DeepCopy")
	_, err = st.Get(ctx, ptr("w"))
	assert.True(t, state.IsNotFoundError(err), "nothing written: %v", err)
}

// copyPanicsLater embeds a typed resource of a plain spec and has its own
// DeepCopy, user code, which copies until *fail is set and then panics.
type copyPanicsLater struct {
	*pair
	fail *atomic.Bool
}

func (c copyPanicsLater) DeepCopy() resource.Resource {
	if c.fail.Load() {
		panic("the wrapper's DeepCopy, later")
	}
	return copyPanicsLater{c.pair.DeepCopy().(*pair), c.fail}
}

// TestR2_AGetCopiesUnderTheRecoverOnceAKindStoredAUserCodeCopy: a Get
// copies the version it found without the deferred recover only while
// every version its kind stored copies itself without user code; once
// the kind stored one whose DeepCopy is user code (after plain ones),
// that copy's panic is an invalid error of the Get, not a crash, and the
// plain versions are still copied.
func TestR2_AGetCopiesUnderTheRecoverOnceAKindStoredAUserCodeCopy(t *testing.T) {
	st, ctx := newTestState(t)
	require.NoError(t, st.Create(ctx, newPair("plain", 1)))
	fail := &atomic.Bool{}
	require.NoError(t, st.Create(ctx, copyPanicsLater{newPair("user", 2), fail}))
	fail.Store(true)
	var err error
	require.NotPanics(t, func() { _, err = st.Get(ctx, ptr("user")) })
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, "the wrapper's DeepCopy, later")
	got, err := st.Get(ctx, ptr("plain"))
	require.NoError(t, err)
	assert.Equal(t, 1, got.(*pair).TypedSpec().A)
}

// TestR2_AWriteOfAPlainResourceCopiesItWithoutUserCode: a write (Create,
// Update, and their owned forms) of a typed resource of a plain spec
// stores it as a resource whose copy runs no user code (one call,
// plaincopy.Of), so that a Get copies it without the deferred recover
// (the kind's userCopies stays false), and a non-owned write stores a
// copy; a write of a wrapper whose DeepCopy is user code sets userCopies.
func TestR2_AWriteOfAPlainResourceCopiesItWithoutUserCode(t *testing.T) {
	c := newCore()
	ctx := context.Background()
	a := newPair("a", 1)
	require.NoError(t, c.Create(ctx, a))
	require.NoError(t, c.CreateOwned(ctx, newPair("b", 2), state.CreateOptions{}))
	a.TypedSpec().A = 3
	require.NoError(t, c.Update(ctx, a))
	b := newPair("b", 4)
	b.Metadata().SetVersion(resource.VersionUndefined.Next())
	require.NoError(t, c.UpdateOwned(ctx, b, state.UpdateOptions{ExpectedPhase: &phaseRunning}))
	ks := c.lookup(resource.KindOf(resource.NewKind(testNS, testType)))
	ks.mu.Lock()
	userCopies, stored := ks.userCopies, ks.bare(ks.items["a"])
	ks.mu.Unlock()
	assert.False(t, userCopies, "every version written copies itself without user code")
	assert.NotSame(t, a, stored.(*pair), "a write stores a copy")
	a.TypedSpec().A = 5
	got, err := c.Get(ctx, ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, 3, got.(*pair).TypedSpec().A)

	require.NoError(t, c.Create(ctx, copyPanicsLater{newPair("w", 1), &atomic.Bool{}}))
	ks.mu.Lock()
	userCopies = ks.userCopies
	ks.mu.Unlock()
	assert.True(t, userCopies, "a wrapper's DeepCopy is user code")
}
