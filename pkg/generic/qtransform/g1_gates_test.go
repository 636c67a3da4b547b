package qtransform_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// teardownAware is a TransformFunc: B.N = 2 * A.N, and B.M = 1 while A
// tears down (the output is computed during an ignored teardown).
func teardownAware(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
	b.TypedSpec().N = 2 * a.TypedSpec().N
	b.TypedSpec().M = 0
	if a.Metadata().Phase() == resource.PhaseTearingDown {
		b.TypedSpec().M = 1
	}
	return nil
}

// runningNM waits for a running resource with spec N and M.
func runningNM(n, m int) func(*B) bool {
	return func(b *B) bool {
		return b.Metadata().Phase() == resource.PhaseRunning && b.TypedSpec().N == n && b.TypedSpec().M == m
	}
}

// gated starts a Runtime with an A → B qtransform named "AtoB" (with
// teardownAware) and opts, creates a1 (N=1) holding the finalizers fins
// besides the controller's, waits for its output, and tears it down.
func gated(t *testing.T, fins []resource.Finalizer, opts ...qtransform.ControllerOption) state.State {
	t.Helper()
	st := newState()
	s := settings("AtoB")
	s.TransformFunc = teardownAware
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(qtransform.NewQController(s, opts...)))
	ctx := context.Background()
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(2, 0)))
	if len(fins) > 0 {
		require.NoError(t, st.AddFinalizer(ctx, ptrA("a1"), fins...))
	}
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Has("AtoB") }))
	_, err := st.Teardown(ctx, ptrA("a1"))
	require.NoError(t, err)
	return st
}

// setTearingDownN sets N of the tearing-down input a1.
func setTearingDownN(t *testing.T, st state.State, n int) {
	t.Helper()
	fixture.SetN[*A](t, st, ptrA("a1"), n, state.WithExpectedPhaseAny())
}

// TestG1a_TeardownIgnoredUntilOnlyGivenFinalizersRemain: with
// WithIgnoreTeardownUntil("keep"), a tearing-down input that still holds
// another finalizer keeps its output, computed as its input changes, and
// the controller's finalizer; once only "keep" (and the controller's own)
// remain, the output is torn down and destroyed and the finalizer goes,
// leaving "keep".
func TestG1a_TeardownIgnoredUntilOnlyGivenFinalizersRemain(t *testing.T) {
	st := gated(t, []resource.Finalizer{"keep", "other"}, qtransform.WithIgnoreTeardownUntil("keep"))
	ctx := context.Background()

	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(2, 1)))
	setTearingDownN(t, st, 5)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(10, 1)))
	md := runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(*resource.Metadata) bool { return true })).Metadata()
	assert.True(t, md.Finalizers().Has("AtoB"), "the controller's finalizer stays while the gate holds")

	require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "other"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool {
		return !md.Finalizers().Has("AtoB") && md.Finalizers().Has("keep")
	}))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "keep"))
	require.NoError(t, st.Destroy(ctx, ptrA("a1")))
}

// TestG1a_UntilTheControllersOwnFinalizerWaitsForEveryOther: naming the
// controller's own finalizer waits until no other one is left.
func TestG1a_UntilTheControllersOwnFinalizerWaitsForEveryOther(t *testing.T) {
	st := gated(t, []resource.Finalizer{"x", "y"}, qtransform.WithIgnoreTeardownUntil("AtoB"))
	ctx := context.Background()
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(2, 1)))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "x"))
	setTearingDownN(t, st, 3) // a change after the removal: still held by y
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(6, 1)))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "y"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Empty() }))
}

// TestG1b_TeardownIgnoredWhileAGivenFinalizerIsPresent: with
// WithIgnoreTeardownWhile("hold"), the teardown is ignored while "hold"
// is there, and proceeds once it goes, whatever else remains.
func TestG1b_TeardownIgnoredWhileAGivenFinalizerIsPresent(t *testing.T) {
	st := gated(t, []resource.Finalizer{"hold", "other"}, qtransform.WithIgnoreTeardownWhile("hold"))
	ctx := context.Background()
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(2, 1)))
	setTearingDownN(t, st, 4)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(runningNM(8, 1)))

	require.NoError(t, st.RemoveFinalizer(ctx, ptrA("a1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(md *resource.Metadata) bool {
		return !md.Finalizers().Has("AtoB") && md.Finalizers().Has("other")
	}))
}

// TestG1b_WithoutAGateTheTeardownProceeds is the control of the gate
// tests: the same input, no gate, loses its output at once.
func TestG1b_WithoutAGateTheTeardownProceeds(t *testing.T) {
	st := gated(t, []resource.Finalizer{"hold"})
	runtimetest.AssertNoResource[*B](t, st, "a1")
}

// quietEngine starts a Runtime over st with ctrl and returns it with the
// observer of its WARN and ERROR logs.
func quietEngine(t *testing.T, st state.State, ctrl controller.QController) (*runtimetest.Env, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.WarnLevel)
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl), runtimetest.WithLogger(zap.New(core)))
	return e, logs
}

// failures counts the logged failures of items.
func failures(logs *observer.ObservedLogs) int {
	return logs.FilterMessageSnippet("failed").Len()
}

// TestG1c_SkipWritesNothingRetriesNothingLogsNothing: a TransformFunc that
// returns (a wrap of) generic.ErrSkip writes no output (a missing one is
// not created, an existing one stays as it was), is not retried and logs
// no failure; the input's finalizer is added all the same, and a later
// change is transformed again.
func TestG1c_SkipWritesNothingRetriesNothingLogsNothing(t *testing.T) {
	st := newState()
	var calls atomic.Int32
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
		calls.Add(1)
		if a.TypedSpec().N < 0 {
			return fmt.Errorf("negative: %w", generic.ErrSkip)
		}
		return double(ctx, r, l, a, b)
	}
	ctrl := record(qtransform.NewQController(s))
	e, logs := quietEngine(t, st, ctrl)

	runtimetest.Create(t, st, newA("neg", -1))
	runtimetest.AssertResource(t, st, "neg", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Has("AtoB") }))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	fixture.SetN[*A](t, st, ptrA("a1"), -5)
	// Once the Runtime is idle, the change to a1 was routed and its item
	// ran; a retry would be an item waiting out its backoff.
	act := runtimetest.Settle(t, e.Runtime)
	require.Len(t, act.Controllers, 1)
	assert.Zero(t, act.Controllers[0].Delayed, "a skip is not retried: %s", act)

	runtimetest.AssertNoResource[*B](t, st, "neg")
	runtimetest.AssertResource(t, st, "a1", func(b *B, asrt *assert.Assertions) { asrt.Equal(2, b.TypedSpec().N) })
	assert.Equal(t, int32(3), calls.Load(), "neg, a1, a1 skipped: a skip is not retried")
	assert.Empty(t, ctrl.Errors, "a skip is no error")
	assert.Zero(t, failures(logs), "a skip logs no failure: %v", logs.All())

	fixture.SetN[*A](t, st, ptrA("neg"), 3)
	runtimetest.AssertResource(t, st, "neg", runtimetest.Holds(fixture.RunningN[*B](6)))
}

// TestG1d_DestroyOutputTearsItDownAsIfTheInputWereGone: a TransformFunc
// that returns generic.ErrDestroyOutput has the input's output torn down,
// destroyed once its finalizers are gone, not retried and not logged; the
// input keeps the controller's finalizer and gets a new output when a
// later TransformFunc fills one.
func TestG1d_DestroyOutputTearsItDownAsIfTheInputWereGone(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
		if a.TypedSpec().N < 0 {
			return fmt.Errorf("negative: %w", generic.ErrDestroyOutput)
		}
		return double(ctx, r, l, a, b)
	}
	ctrl := record(qtransform.NewQController(s))
	_, logs := quietEngine(t, st, ctrl)
	ctx := context.Background()

	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.AddFinalizer(ctx, ptrB("a1"), "hold"))
	fixture.SetN[*A](t, st, ptrA("a1"), -1)
	runtimetest.AssertResource(t, st, "a1", fixture.Meta[*B](func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrB("a1"), "hold"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	md := runtimetest.AssertResource(t, st, "a1", fixture.Meta[*A](func(*resource.Metadata) bool { return true })).Metadata()
	assert.True(t, md.Finalizers().Has("AtoB"), "the running input keeps the controller's finalizer")

	fixture.SetN[*A](t, st, ptrA("a1"), 4)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](8)))
	assert.Empty(t, ctrl.Errors, "a destroy signal is no error")
	assert.Zero(t, failures(logs), "a destroy signal logs no failure: %v", logs.All())

	teardownAndDestroy(t, st, ptrA("a1"))
	runtimetest.AssertNoResource[*B](t, st, "a1")
}

// TestG1e_SignalWhereItCannotBeHonouredIsInvalid: an outcome signal from
// a function other than TransformFunc (here TransformExtraOutputFunc and
// FinalizerRemovalFunc) fails the item with an invalid-class error that
// names the controller, the function and the fix.
func TestG1e_SignalWhereItCannotBeHonouredIsInvalid(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.TransformExtraOutputFunc = func(_ context.Context, _ controller.ReaderWriter, _ *zap.Logger, a *A, _ *B) error {
		if a.TypedSpec().N < 0 {
			return generic.ErrSkip
		}
		return nil
	}
	s.FinalizerRemovalFunc = func(context.Context, controller.Reader, *zap.Logger, *A) error { return generic.ErrDestroyOutput }
	ctrl := record(qtransform.NewQController(s))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))

	runtimetest.Create(t, st, newA("a1", -1))
	err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "TransformExtraOutputFunc") })
	assert.True(t, state.IsInvalidError(err), "want an invalid-class error: %v", err)
	assert.Contains(t, err.Error(), `controller "AtoB"`)
	assert.Contains(t, err.Error(), "only TransformFunc may return")

	fixture.SetN[*A](t, st, ptrA("a1"), 1)
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	_, err = st.Teardown(context.Background(), ptrA("a1"))
	require.NoError(t, err)
	err = ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "FinalizerRemovalFunc") })
	assert.True(t, state.IsInvalidError(err), "want an invalid-class error: %v", err)
	assert.True(t, errors.Is(err, generic.ErrDestroyOutput) || strings.Contains(err.Error(), "destroy this input's output"))
}

// TestG1e_BadLabelTermNamesTheController: a conditional mapper with a
// label term of an empty key fails MapInput with an invalid-class error
// that names the controller and the fix.
func TestG1e_BadLabelTermNamesTheController(t *testing.T) {
	st := newState()
	ctrl := record(aToB("AtoB", qtransform.WithExtraMappedInput(
		mapper.When(mapper.ByLabel[*C]("parent", typed.Kind[*A]()), resource.LabelExists("")))))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
	runtimetest.Create(t, st, child("c1", "a1"))
	err := ctrl.Await(t, func(err error) bool { return strings.Contains(err.Error(), "empty key") })
	assert.True(t, state.IsInvalidError(err), "want an invalid-class error: %v", err)
	assert.Contains(t, err.Error(), `qtransform "AtoB"`)
	assert.Contains(t, err.Error(), "give the label's key")
}

// TestG1f_OptionalMappingLeavesAnInputWithoutOutput: with
// MapMetadataOptionalFunc, an input mapped to None gets no output and no
// finalizer; an input that stops mapping loses its output and gives its
// finalizer back; one that maps again gets both; teardown works either
// way.
func TestG1f_OptionalMappingLeavesAnInputWithoutOutput(t *testing.T) {
	st := newState()
	s := settings("AtoB")
	s.MapMetadataFunc = nil
	s.MapMetadataOptionalFunc = func(a *A) optional.Optional[*B] {
		if a.TypedSpec().N <= 0 {
			return optional.None[*B]()
		}
		return optional.Some(fixture.Map[*A, fixture.BDef](a))
	}
	ctrl := record(qtransform.NewQController(s))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))

	runtimetest.Create(t, st, newA("down", 0), newA("up", 1))
	runtimetest.AssertResource(t, st, "up", runtimetest.Holds(fixture.RunningN[*B](2)))
	runtimetest.AssertNoResource[*B](t, st, "down")
	md := runtimetest.AssertResource(t, st, "down", fixture.Meta[*A](func(*resource.Metadata) bool { return true })).Metadata()
	assert.False(t, md.Finalizers().Has("AtoB"), "an input without output gets no finalizer")

	fixture.SetN[*A](t, st, ptrA("up"), 0) // stops mapping
	runtimetest.AssertNoResource[*B](t, st, "up")
	runtimetest.AssertResource(t, st, "up", fixture.Meta[*A](func(md *resource.Metadata) bool { return !md.Finalizers().Has("AtoB") }))
	fixture.SetN[*A](t, st, ptrA("down"), 3) // starts mapping
	runtimetest.AssertResource(t, st, "down", runtimetest.Holds(fixture.RunningN[*B](6)))
	runtimetest.AssertResource(t, st, "down", fixture.Meta[*A](func(md *resource.Metadata) bool { return md.Finalizers().Has("AtoB") }))

	teardownAndDestroy(t, st, ptrA("down"))
	runtimetest.AssertNoResource[*B](t, st, "down")
	teardownAndDestroy(t, st, ptrA("up"))
	require.Empty(t, ctrl.Errors)
}
