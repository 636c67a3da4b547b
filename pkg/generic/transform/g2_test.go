package transform_test

import (
	"context"
	"errors"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

type badDef struct{}

func (badDef) Definition() typed.Definition { return typed.Definition{Type: "Bad.test.resgraph.dev"} }

type panickyDef struct{}

func (panickyDef) Definition() typed.Definition { panic("no definition") }

type (
	bad     = typed.Resource[fixture.Spec, badDef]
	panicky = typed.Resource[fixture.Spec, panickyDef]
)

func TestG2_MisconfigurationIsRefusedAtRegistration(t *testing.T) {
	mapB := fixture.Map[*A, fixture.BDef]
	none := func(*A) optional.Optional[*B] { return optional.None[*B]() }
	input := func(k controller.InputKind, ns, typ string) controller.Input {
		return controller.Input{Namespace: ns, Type: typ, Kind: k}
	}
	for _, tc := range []struct {
		ctrl    controller.Controller
		name    string
		setting []string
	}{
		{name: "no mapping", setting: []string{"MapMetadataFunc", "MapMetadataOptionalFunc", "both nil"},
			ctrl: transform.NewController(transform.Settings[*A, *B]{Name: "x", TransformFunc: double})},
		{name: "two mappings", setting: []string{"MapMetadataFunc", "MapMetadataOptionalFunc", "both set"},
			ctrl: transform.NewController(transform.Settings[*A, *B]{Name: "x", MapMetadataFunc: mapB, MapMetadataOptionalFunc: none, TransformFunc: double})},
		{name: "no transform", setting: []string{"TransformFunc is nil"},
			ctrl: transform.NewController(transform.Settings[*A, *B]{Name: "x", MapMetadataFunc: mapB})},
		{name: "empty name", setting: []string{"Name is empty"},
			ctrl: transform.NewController(transform.Settings[*A, *B]{MapMetadataFunc: mapB, TransformFunc: double})},
		{name: "gate until no finalizer", setting: []string{"WithIgnoreTeardownUntil names no finalizer"}, ctrl: aToB("x", transform.WithIgnoreTeardownUntil())},
		{name: "gate while an empty finalizer", setting: []string{"WithIgnoreTeardownWhile names no finalizer"}, ctrl: aToB("x", transform.WithIgnoreTeardownWhile(""))},
		{name: "gate while the own finalizer", setting: []string{"WithIgnoreTeardownWhile", "own finalizer"},
			ctrl: aToB("x", transform.WithInputFinalizers(), transform.WithIgnoreTeardownWhile("x"))},
		{name: "gate and ignore every teardown", setting: []string{"WithIgnoreTearingDownInputs", "gate"},
			ctrl: aToB("x", transform.WithIgnoreTeardownWhile("a"), transform.WithIgnoreTearingDownInputs())},
		{name: "bad output kind", setting: []string{"WithOutputKind(OutputKind(7))"}, ctrl: aToB("x", transform.WithOutputKind(7))},
		{name: "input finalizers both ways", setting: []string{"WithInputFinalizers", "WithoutInputFinalizers", "contradict"},
			ctrl: aToB("x", transform.WithInputFinalizers(), transform.WithoutInputFinalizers())},
		{name: "queue input kind", setting: []string{"WithExtraInputs", "input kind"},
			ctrl: aToB("x", transform.WithExtraInputs(input(controller.InputQPrimary, "n", "t")))},
		{name: "destroy-ready extra input", setting: []string{"WithExtraInputs", "input kind InputDestroyReady"},
			ctrl: aToB("x", transform.WithExtraInputs(input(controller.InputDestroyReady, "n", "t")))},
		{name: "extra input is the input", setting: []string{"WithExtraInputs", "is the input kind"},
			ctrl: aToB("x", transform.WithExtraInputs(input(controller.InputStrong, kindA.Namespace(), kindA.Type())))},
		{name: "extra input is the output", setting: []string{"WithExtraInputs", "output type"},
			ctrl: aToB("x", transform.WithExtraInputs(input(controller.InputWeak, kindB.Namespace(), kindB.Type())))},
		{name: "extra output is the output", setting: []string{"WithExtraOutputs", "is the output type"},
			ctrl: aToB("x", transform.WithExtraOutputs(controller.Output{Type: kindB.Type()}))},
		{name: "extra output twice", setting: []string{"WithExtraOutputs", "twice"},
			ctrl: aToB("x", transform.WithExtraOutputs(controller.Output{Type: kindC.Type()}), transform.WithExtraOutputs(controller.Output{Type: kindC.Type()}))},
		{name: "extra output without type", setting: []string{"WithExtraOutputs", "empty type"},
			ctrl: aToB("x", transform.WithExtraOutputs(controller.Output{}))},
		{name: "extra output of unknown kind", setting: []string{"WithExtraOutputs", "output kind OutputKind(5)"},
			ctrl: aToB("x", transform.WithExtraOutputs(controller.Output{Type: kindC.Type(), Kind: 5}))},
		{name: "bad output definition", setting: []string{"output type", "empty type or default namespace"},
			ctrl: transform.NewController(transform.Settings[*A, *bad]{
				Name: "x", MapMetadataFunc: func(*A) *bad { return nil }, TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *A, *bad) error { return nil },
			})},
		{name: "panicking input definition", setting: []string{"input type", "no definition"},
			ctrl: transform.NewController(transform.Settings[*panicky, *B]{
				Name: "x", MapMetadataFunc: func(*panicky) *B { return nil }, TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *panicky, *B) error { return nil },
			})},
		{name: "uncopyable output spec", setting: []string{"output type", "Uncopyables.test.resgraph.dev", "fixture.HookSpec cannot be deep-copied", "Hook", "DeepCopy method"},
			ctrl: transform.NewController(transform.Settings[*A, *fixture.Uncopyable]{
				Name: "x", MapMetadataFunc: func(*A) *fixture.Uncopyable { return nil },
				TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *A, *fixture.Uncopyable) error { return nil },
			})},
		{name: "uncopyable input spec", setting: []string{"input type", "fixture.HookSpec cannot be deep-copied"},
			ctrl: transform.NewController(transform.Settings[*fixture.Uncopyable, *B]{
				Name: "x", MapMetadataFunc: func(*fixture.Uncopyable) *B { return nil },
				TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *fixture.Uncopyable, *B) error { return nil },
			})},
		{name: "same input and output", setting: []string{"same type"},
			ctrl: transform.NewController(transform.Settings[*A, *A]{Name: "x", MapMetadataFunc: func(a *A) *A { return a }, TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *A, *A) error { return nil }})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.ctrl.Name()
			fixture.AssertRefused(t, tc.ctrl, name, tc.setting...)

			// A Runtime that does not call Validate: Run fails at once,
			// with the same error, instead of reconciling.
			err := tc.ctrl.Run(context.Background(), nil, zap.NewNop())
			assert.True(t, state.IsInvalidError(err), "want an invalid-class error, got %v", err)
			assert.ErrorIs(t, err, tc.ctrl.(controller.Validator).Validate())
		})
	}
}

func TestG2_FinalizerRemovalFuncWithoutInputFinalizersIsIgnored(t *testing.T) {
	st := newState()
	vetoes := make(chan struct{}, 1)
	ctrl := transform.NewController(transform.Settings[*A, *B]{
		Name:            "AtoB",
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc:   double,
		FinalizerRemovalFunc: func(context.Context, controller.Reader, *zap.Logger, *A) error {
			vetoes <- struct{}{}
			return errors.New("never let go")
		},
	})
	require.NoError(t, ctrl.Validate(), "an unused setting is not an error")
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	a, err := st.Get(context.Background(), ptrA("a1"))
	require.NoError(t, err)
	assert.True(t, a.Metadata().Finalizers().Empty(), "no input finalizer without WithInputFinalizers")

	require.NoError(t, st.Destroy(context.Background(), ptrA("a1")))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	assert.Empty(t, vetoes, "FinalizerRemovalFunc is never called")
}

func TestG2_NilOptionsAreSkipped(t *testing.T) {
	st := newState()
	ctrl := aToB("AtoB", nil, transform.WithInputListOptions(nil), nil)
	require.NoError(t, ctrl.Validate())
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
}
