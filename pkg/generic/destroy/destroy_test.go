package destroy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/destroy"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

var (
	kindA = typed.Kind[*fixture.A]()
	kindC = typed.Kind[*fixture.C]()
)

func ptrA(id string) resource.Pointer { return typed.Pointer[*fixture.A](id) }
func ptrC(id string) resource.Pointer { return typed.Pointer[*fixture.C](id) }

// sync brings the output C of an input A up to date when A is running,
// and tears it down (never destroying it) otherwise.
func sync(ctx context.Context, rw controller.ReaderWriter, id resource.ID) error {
	a, err := safe.ReaderGet[*fixture.A](ctx, rw, ptrA(id))
	if err == nil && a.Metadata().Phase() == resource.PhaseRunning {
		return safe.WriterModify(ctx, rw, fixture.New[fixture.CDef](id, 0), func(c *fixture.C) error {
			c.TypedSpec().N = a.TypedSpec().N
			return nil
		})
	}
	if err != nil && !state.IsNotFoundError(err) {
		return err
	}
	if _, err := rw.Teardown(ctx, ptrC(id)); err != nil && !state.IsNotFoundError(err) {
		return err
	}
	return nil
}

// tearer is a Controller that tears its outputs down but never destroys
// them.
type tearer struct{}

func (tearer) Name() string { return "tearer" }
func (tearer) Inputs() []controller.Input {
	return []controller.Input{{Namespace: kindA.Namespace(), Type: kindA.Type(), Kind: controller.InputWeak}}
}
func (tearer) Outputs() []controller.Output { return []controller.Output{{Type: kindC.Type()}} }
func (tearer) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		outs, err := r.List(ctx, kindC)
		if err != nil {
			return err
		}
		ins, err := r.List(ctx, kindA)
		if err != nil {
			return err
		}
		ids := map[resource.ID]struct{}{}
		for _, l := range []resource.List{outs, ins} {
			for _, x := range l.Items {
				if owner := x.Metadata().Owner(); x.Metadata().Type() == kindA.Type() || owner == "tearer" {
					ids[x.Metadata().ID()] = struct{}{}
				}
			}
		}
		for id := range ids {
			if err := sync(ctx, r, id); err != nil {
				return err
			}
		}
	}
}

// qtearer is tearer as a QController.
type qtearer struct{}

func (qtearer) Name() string { return "qtearer" }
func (qtearer) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:  []controller.Input{{Namespace: kindA.Namespace(), Type: kindA.Type(), Kind: controller.InputQPrimary}},
		Outputs: []controller.Output{{Type: kindC.Type()}},
	}
}
func (qtearer) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	return sync(ctx, r, ptr.ID())
}
func (qtearer) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

func TestWrappedControllersDestroyTheirReadyOutputs(t *testing.T) {
	wrapped, err := destroy.Wrap(tearer{}, kindC)
	require.NoError(t, err)
	qwrapped, err := destroy.WrapQ(qtearer{}, kindC)
	require.NoError(t, err)
	for name, ctrl := range map[string]runtimetest.Option{
		"controller":  runtimetest.WithControllers(wrapped),
		"qcontroller": runtimetest.WithQControllers(qwrapped),
	} {
		t.Run(name, func(t *testing.T) {
			st := inmem.NewState()
			ctx := context.Background()
			runtimetest.Create(t, st, fixture.New[fixture.ADef]("a1", 1), fixture.New[fixture.ADef]("a2", 2))
			runtimetest.Start(t, runtimetest.WithState(st), ctrl)
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*fixture.C](1)))
			runtimetest.AssertResource(t, st, "a2", runtimetest.Holds(fixture.RunningN[*fixture.C](2)))
			require.NoError(t, st.AddFinalizer(ctx, ptrC("a1"), "hold"))

			_, err := st.Teardown(ctx, ptrA("a1"))
			require.NoError(t, err)
			_, err = st.Teardown(ctx, ptrA("a2"))
			require.NoError(t, err)
			runtimetest.AssertNoResource[*fixture.C](t, st, "a2")
			// The two inputs are processed in any order: a1's output may
			// start tearing down after a2's output is gone.
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(func(got *fixture.C) bool { return got.Metadata().Phase() == resource.PhaseTearingDown }))
			c1, err := st.Get(ctx, ptrC("a1"))
			require.NoError(t, err, "an output with finalizers is not destroyed")
			assert.Equal(t, resource.PhaseTearingDown, c1.Metadata().Phase())

			require.NoError(t, st.RemoveFinalizer(ctx, ptrC("a1"), "hold"))
			runtimetest.AssertNoResource[*fixture.C](t, st, "a1")
		})
	}
}

func TestOnlyOwnReadyOutputsAreDestroyed(t *testing.T) {
	wrapped, err := destroy.Wrap(tearer{}, kindC)
	require.NoError(t, err)
	st := inmem.NewState()
	ctx := context.Background()
	// A tearing-down C of another owner, and a running C of the tearer.
	foreign := fixture.New[fixture.CDef]("foreign", 0)
	require.NoError(t, st.Create(ctx, foreign, state.WithCreateOwner("someone")))
	_, err = st.Teardown(ctx, ptrC("foreign"), state.WithTeardownOwner("someone"))
	require.NoError(t, err)
	runtimetest.Create(t, st, fixture.New[fixture.ADef]("a1", 1), fixture.New[fixture.ADef]("gone", 1))
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(wrapped))
	runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*fixture.C](1)))
	runtimetest.AssertResource(t, st, "gone", runtimetest.Holds(fixture.RunningN[*fixture.C](1)))

	require.NoError(t, st.Destroy(ctx, ptrA("gone")))
	runtimetest.AssertNoResource[*fixture.C](t, st, "gone")
	_, err = st.Get(ctx, ptrC("foreign"))
	assert.NoError(t, err, "another owner's output is left alone")
	c, err := st.Get(ctx, ptrC("a1"))
	require.NoError(t, err)
	assert.Equal(t, resource.PhaseRunning, c.Metadata().Phase(), "a running output is left alone")
}

func TestWrapRefusesBadKinds(t *testing.T) {
	kindB := typed.Kind[*fixture.B]()
	for name, kinds := range map[string][]resource.Kind{
		"no kinds":     nil,
		"not output":   {kindB},
		"an input":     {kindA},
		"twice":        {kindC, kindC},
		"empty fields": {resource.NewKind("", kindC.Type())},
		"nil kind":     {nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := destroy.Wrap(tearer{}, kinds...)
			assert.True(t, state.IsInvalidError(err), "got %v", err)
			_, err = destroy.WrapQ(qtearer{}, kinds...)
			assert.True(t, state.IsInvalidError(err), "got %v", err)
		})
	}
}

// panicky is a Controller and QController whose declarations panic.
type panicky struct{ qtearer }

func (panicky) Name() string                   { panic("no name") }
func (panicky) Settings() controller.QSettings { panic("no settings") }
func (panicky) Inputs() []controller.Input     { panic("no inputs") }
func (panicky) Outputs() []controller.Output   { panic("no outputs") }
func (panicky) Run(context.Context, controller.Runtime, *zap.Logger) error {
	return nil
}

func TestWrapRefusesNilAndPanickingControllers(t *testing.T) {
	_, err := destroy.Wrap(nil, kindC)
	assert.True(t, state.IsInvalidError(err), "got %v", err)
	_, err = destroy.Wrap((*tearer)(nil), kindC)
	assert.True(t, state.IsInvalidError(err), "got %v", err)
	_, err = destroy.WrapQ(nil, kindC)
	assert.True(t, state.IsInvalidError(err), "got %v", err)
	_, err = destroy.Wrap(panicky{}, kindC)
	assert.True(t, state.IsInvalidError(err), "got %v", err)
	assert.ErrorContains(t, err, "no name")
	_, err = destroy.WrapQ(panicky{}, kindC)
	assert.True(t, state.IsInvalidError(err), "got %v", err)
	assert.ErrorContains(t, err, "no name")
}

// validated is tearer (or qtearer) with a Validate method.
type (
	validated  struct{ tearer }
	qvalidated struct{ qtearer }
)

var errSetting = errors.New("Settings.Something: cannot work")

func (validated) Validate() error  { return errSetting }
func (qvalidated) Validate() error { return errSetting }

func TestG2_WrappedControllersKeepTheirValidation(t *testing.T) {
	w, err := destroy.Wrap(validated{}, kindC)
	require.NoError(t, err)
	fixture.AssertRefused(t, w, "tearer", "Settings.Something")
	qw, err := destroy.WrapQ(qvalidated{}, kindC)
	require.NoError(t, err)
	fixture.AssertRefused(t, qw, "qtearer", "Settings.Something")

	// Without a Validate method, the wrapped controller validates.
	w, err = destroy.Wrap(tearer{}, kindC)
	require.NoError(t, err)
	require.NoError(t, w.(controller.Validator).Validate())
}

func TestInputsDeclareDestroyReadiness(t *testing.T) {
	assert.Equal(t, controller.Input{Namespace: kindC.Namespace(), Type: kindC.Type(), Kind: controller.InputDestroyReady}, destroy.Input(kindC))
	assert.Equal(t, controller.Input{Namespace: kindC.Namespace(), Type: kindC.Type(), Kind: controller.InputQMappedDestroyReady}, destroy.QInput(kindC))
	wrapped, err := destroy.Wrap(tearer{}, kindC)
	require.NoError(t, err)
	assert.Contains(t, wrapped.Inputs(), destroy.Input(kindC))
	assert.Len(t, tearer{}.Inputs(), 1, "the inner controller's inputs are not changed")
	qwrapped, err := destroy.WrapQ(qtearer{}, kindC)
	require.NoError(t, err)
	assert.Contains(t, qwrapped.Settings().Inputs, destroy.QInput(kindC))
	assert.Equal(t, optional.None[uint](), qwrapped.Settings().Concurrency)
}
