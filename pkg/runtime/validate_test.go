package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

// validating is a Controller and a QController with a Validate method.
type validating struct {
	funcController
	qsettings controller.QSettings
	validate  func() error
	// calls counts the Validate calls.
	calls int
}

func (v *validating) Settings() controller.QSettings { return v.qsettings }

func (v *validating) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return nil
}

func (v *validating) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

func (v *validating) Validate() error {
	v.calls++
	return v.validate()
}

var _ controller.Validator = (*validating)(nil)

// settingError is a Validate error of a type of its own, to check that the
// Runtime wraps it (errors.As finds it).
type settingError struct{ setting string }

func (e *settingError) Error() string { return e.setting + ": cannot work" }

func newValidating(name string, validate func() error) *validating {
	return &validating{
		funcController: funcController{name: name, inputs: []controller.Input{in(typeA, controller.InputWeak)}, outputs: []controller.Output{out(typeB, controller.OutputExclusive)}},
		qsettings:      controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary)}, Outputs: []controller.Output{out(typeB, controller.OutputExclusive)}},
		validate:       validate,
	}
}

// registerAs registers v as a Controller or as a QController.
func registerAs(rt *runtime.Runtime, asQ bool, v *validating) error {
	if asQ {
		return rt.RegisterQController(v)
	}
	return rt.RegisterController(v)
}

// The Runtime's part of rule G2 (tested with the generic controllers): a
// controller.Validator is asked at registration, and its answer decides.

// TestValidator_AnErrorRefusesTheRegistration: a Validate error refuses
// the registration, before and during Run, with an invalid-class error
// naming the controller and wrapping Validate's; nothing is registered.
func TestValidator_AnErrorRefusesTheRegistration(t *testing.T) {
	t.Parallel()
	for _, asQ := range []bool{false, true} {
		for _, during := range []bool{false, true} {
			synctest.Test(t, func(t *testing.T) {
				rt := unstarted(t)
				if during {
					rt = start(t).Runtime
				}
				bad := newValidating("bad", func() error { return &settingError{setting: "Settings.MapFunc"} })
				err := registerAs(rt, asQ, bad)
				require.Error(t, err, "q=%v during=%v", asQ, during)
				assert.True(t, state.IsInvalidError(err), "an invalid-class error: %v", err)
				assert.Contains(t, err.Error(), `"bad"`, "the error names the controller")
				assert.Contains(t, err.Error(), "Settings.MapFunc: cannot work", "and the setting, as Validate said")
				var se *settingError
				assert.ErrorAs(t, err, &se, "Validate's error is wrapped")
				assert.Equal(t, 1, bad.calls)
				assert.Empty(t, rt.Observe().Controllers(), "nothing is registered")
				g, err := rt.GetDependencyGraph()
				require.NoError(t, err)
				assert.Empty(t, g.Edges, "no edge of the refused controller")

				// The name is free: a valid controller of that name registers.
				good := newValidating("bad", func() error { return nil })
				require.NoError(t, registerAs(rt, asQ, good))
				assert.Equal(t, 1, good.calls)
			})
		}
	}
}

// TestValidator_APanicRefusesTheRegistration: a panicking Validate is
// refused like an error.
func TestValidator_APanicRefusesTheRegistration(t *testing.T) {
	t.Parallel()
	for _, asQ := range []bool{false, true} {
		rt := unstarted(t)
		err := registerAs(rt, asQ, newValidating("boom", func() error { panic("Validate exploded") }))
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `"boom"`)
		assert.Contains(t, err.Error(), "Validate exploded")
		assert.Empty(t, rt.Observe().Controllers(), "nothing is registered")
	}
}

// TestValidator_ATypedNilErrorRefusesTheRegistration: a typed-nil error
// from Validate is refused too.
func TestValidator_ATypedNilErrorRefusesTheRegistration(t *testing.T) {
	// A typed-nil error is almost always a bug (var e *E; return e): it is
	// not taken for success.
	t.Parallel()
	for _, asQ := range []bool{false, true} {
		rt := unstarted(t)
		var typedNil *settingError
		err := registerAs(rt, asQ, newValidating("odd", func() error { return typedNil }))
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `"odd"`)
		assert.Contains(t, err.Error(), "typed-nil *runtime_test.settingError")
		assert.Empty(t, rt.Observe().Controllers(), "nothing is registered")
	}
}
