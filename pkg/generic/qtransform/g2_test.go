package qtransform_test

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
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

type badDef struct{}

func (badDef) Definition() typed.Definition { return typed.Definition{Type: "Bad.test.resgraph.dev"} }

type bad = typed.Resource[fixture.Spec, badDef]

func TestG2_MisconfigurationIsRefusedAtRegistration(t *testing.T) {
	with := func(name string, change func(*qtransform.Settings[*A, *B])) qtransform.Settings[*A, *B] {
		s := settings(name)
		change(&s)
		return s
	}
	noMap := with("x", func(s *qtransform.Settings[*A, *B]) { s.MapMetadataFunc = nil })
	noUnmap := with("x", func(s *qtransform.Settings[*A, *B]) { s.UnmapMetadataFunc = nil })
	noTransform := with("x", func(s *qtransform.Settings[*A, *B]) { s.TransformFunc = nil })
	mapC := func(context.Context, *zap.Logger, controller.QRuntime, *C) ([]resource.Pointer, error) {
		return nil, nil
	}
	for _, tc := range []struct {
		ctrl    *qtransform.QController[*A, *B]
		name    string
		setting []string
	}{
		{name: "no mapping", setting: []string{"MapMetadataFunc and Settings.MapMetadataOptionalFunc are both nil"}, ctrl: qtransform.NewQController(noMap)},
		{name: "two mappings", setting: []string{"MapMetadataFunc and Settings.MapMetadataOptionalFunc are both set"},
			ctrl: qtransform.NewQController(with("x", func(s *qtransform.Settings[*A, *B]) {
				s.MapMetadataOptionalFunc = func(*A) optional.Optional[*B] { return optional.None[*B]() }
			}))},
		{name: "no unmapping without input finalizers", setting: []string{"UnmapMetadataFunc is nil", "WithoutInputFinalizers"},
			ctrl: qtransform.NewQController(noUnmap, qtransform.WithoutInputFinalizers())},
		{name: "no transform", setting: []string{"TransformFunc is nil"}, ctrl: qtransform.NewQController(noTransform)},
		{name: "empty name", setting: []string{"Name is empty"}, ctrl: aToB("")},
		{name: "bad output kind", setting: []string{"WithOutputKind(OutputKind(9))"}, ctrl: aToB("x", qtransform.WithOutputKind(9))},
		{name: "input finalizers both ways", setting: []string{"WithInputFinalizers", "WithoutInputFinalizers", "contradict"},
			ctrl: aToB("x", qtransform.WithoutInputFinalizers(), qtransform.WithInputFinalizers())},
		{name: "no concurrency", setting: []string{"WithConcurrency(0)"}, ctrl: aToB("x", qtransform.WithConcurrency(0))},
		{name: "mapped input twice", setting: []string{"WithExtraMappedInput", "twice"},
			ctrl: aToB("x", qtransform.WithExtraMappedInput(mapC), qtransform.WithExtraMappedInput(mapC))},
		{name: "mapped input is the output", setting: []string{"WithExtraMappedInput", "output type"},
			ctrl: aToB("x", qtransform.WithExtraMappedInput(func(context.Context, *zap.Logger, controller.QRuntime, *B) ([]resource.Pointer, error) {
				return nil, nil
			}))},
		{name: "nil mapper", setting: []string{"WithExtraMappedInput", "nil mapper"},
			ctrl: aToB("x", qtransform.WithExtraMappedInput[*C](nil))},
		{name: "mapped input of a bad definition", setting: []string{"WithExtraMappedInput", "empty type or default namespace"},
			ctrl: aToB("x", qtransform.WithExtraMappedInput(func(context.Context, *zap.Logger, controller.QRuntime, *bad) ([]resource.Pointer, error) {
				return nil, nil
			}))},
		{name: "extra output is the output", setting: []string{"WithExtraOutputs", "is the output type"},
			ctrl: aToB("x", qtransform.WithExtraOutputs(controller.Output{Type: kindB.Type()}))},
		{name: "gate until no finalizer", setting: []string{"WithIgnoreTeardownUntil names no finalizer"}, ctrl: aToB("x", qtransform.WithIgnoreTeardownUntil())},
		{name: "gate until an empty finalizer", setting: []string{"WithIgnoreTeardownUntil names no finalizer"}, ctrl: aToB("x", qtransform.WithIgnoreTeardownUntil("a", ""))},
		{name: "gate while no finalizer", setting: []string{"WithIgnoreTeardownWhile names no finalizer"}, ctrl: aToB("x", qtransform.WithIgnoreTeardownWhile())},
		{name: "gate while the own finalizer", setting: []string{"WithIgnoreTeardownWhile", "own finalizer", "never open"},
			ctrl: aToB("x", qtransform.WithIgnoreTeardownWhile("x"))},
		{name: "gate and ignore every teardown", setting: []string{"WithIgnoreTearingDownInputs", "gate"},
			ctrl: aToB("x", qtransform.WithIgnoreTeardownUntil("a"), qtransform.WithIgnoreTearingDownInputs())},
		{name: "both removal functions", setting: []string{"FinalizerRemovalFunc", "FinalizerRemovalExtraOutputFunc", "both set"},
			ctrl: qtransform.NewQController(with("x", func(s *qtransform.Settings[*A, *B]) {
				s.FinalizerRemovalFunc = func(context.Context, controller.Reader, *zap.Logger, *A) error { return nil }
				s.FinalizerRemovalExtraOutputFunc = func(context.Context, controller.ReaderWriter, *zap.Logger, *A) error { return nil }
			}))},
		{name: "mapped input of a bad kind", setting: []string{"WithExtraMappedInput", "neither controller.InputQMapped nor controller.InputQMappedDestroyReady"},
			ctrl: aToB("x", qtransform.WithExtraMappedInputKind(mapC, controller.InputWeak))},
		{name: "extra output twice", setting: []string{"WithExtraOutputs", "twice"},
			ctrl: aToB("x", qtransform.WithExtraOutputs(controller.Output{Type: kindC.Type()}, controller.Output{Type: kindC.Type()}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fixture.AssertRefused(t, tc.ctrl, tc.ctrl.Name(), tc.setting...)

			// A Runtime that does not call Validate: every call fails at
			// once, with the same error.
			verr := tc.ctrl.Validate()
			err := tc.ctrl.Reconcile(context.Background(), zap.NewNop(), nil, ptrA("a"))
			assert.True(t, state.IsInvalidError(err), "want an invalid-class error, got %v", err)
			assert.ErrorIs(t, err, verr)
			_, err = tc.ctrl.MapInput(context.Background(), zap.NewNop(), nil, ptrB("a"))
			assert.ErrorIs(t, err, verr)
		})
	}
	t.Run("destroy-ready mapped input not an output", func(t *testing.T) {
		// Refused by the Runtime's own check of the declarations.
		fixture.AssertRefused(t, aToB("x", qtransform.WithExtraMappedDestroyReadyInput(mapC)), "x",
			"InputQMappedDestroyReady", "the controller does not output")
	})
	t.Run("bad output definition", func(t *testing.T) {
		fixture.AssertRefused(t, qtransform.NewQController(qtransform.Settings[*A, *bad]{
			Name:              "x",
			MapMetadataFunc:   func(*A) *bad { return nil },
			UnmapMetadataFunc: func(*bad) *A { return nil },
			TransformFunc:     func(context.Context, controller.Reader, *zap.Logger, *A, *bad) error { return nil },
		}), "x", "output type", "empty type or default namespace")
	})
	t.Run("uncopyable output spec", func(t *testing.T) {
		fixture.AssertRefused(t, qtransform.NewQController(qtransform.Settings[*A, *fixture.Uncopyable]{
			Name:            "x",
			MapMetadataFunc: func(*A) *fixture.Uncopyable { return nil },
			TransformFunc:   func(context.Context, controller.Reader, *zap.Logger, *A, *fixture.Uncopyable) error { return nil },
		}), "x", "output type", "fixture.HookSpec cannot be deep-copied", "Hook", "DeepCopy method")
	})
	t.Run("uncopyable input spec", func(t *testing.T) {
		fixture.AssertRefused(t, qtransform.NewQController(qtransform.Settings[*fixture.Uncopyable, *B]{
			Name:            "x",
			MapMetadataFunc: func(*fixture.Uncopyable) *B { return nil },
			TransformFunc:   func(context.Context, controller.Reader, *zap.Logger, *fixture.Uncopyable, *B) error { return nil },
		}), "x", "input type", "fixture.HookSpec cannot be deep-copied")
	})
	t.Run("uncopyable extra mapped input spec", func(t *testing.T) {
		fixture.AssertRefused(t, aToB("x", qtransform.WithExtraMappedInput(func(context.Context, *zap.Logger, controller.QRuntime, *fixture.Uncopyable) ([]resource.Pointer, error) {
			return nil, nil
		})), "x", "WithExtraMappedInput", "fixture.HookSpec cannot be deep-copied")
	})
	t.Run("same input and output", func(t *testing.T) {
		fixture.AssertRefused(t, qtransform.NewQController(qtransform.Settings[*A, *A]{
			Name:              "x",
			MapMetadataFunc:   func(a *A) *A { return a },
			UnmapMetadataFunc: func(a *A) *A { return a },
			TransformFunc:     func(context.Context, controller.Reader, *zap.Logger, *A, *A) error { return nil },
		}), "x", "same type")
	})
}

func TestG2_FinalizerRemovalFuncWithoutInputFinalizersIsIgnored(t *testing.T) {
	st := newState()
	vetoes := make(chan struct{}, 1)
	s := settings("AtoB")
	s.FinalizerRemovalFunc = func(context.Context, controller.Reader, *zap.Logger, *A) error {
		vetoes <- struct{}{}
		return errors.New("never let go")
	}
	ctrl := qtransform.NewQController(s, qtransform.WithoutInputFinalizers())
	require.NoError(t, ctrl.Validate(), "an unused setting is not an error")
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
	require.NoError(t, st.Destroy(context.Background(), ptrA("a1")))
	runtimetest.AssertNoResource[*B](t, st, "a1")
	assert.Empty(t, vetoes, "FinalizerRemovalFunc is never called")
}

func TestG2_NilOptionsAreSkipped(t *testing.T) {
	st := newState()
	ctrl := aToB("AtoB", nil, qtransform.WithConcurrency(2), nil)
	require.NoError(t, ctrl.Validate())
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(ctrl))
	runtimetest.Create(t, st, newA("a1", 1))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
}
