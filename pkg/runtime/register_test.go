package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// Rule C1 is tested in conformance; these tests check every reason the
// runtime's registration gives for a refusal, and its panicking
// declarations.

// unstarted returns a Runtime over a fresh state that is never run: these
// tests check registration, before Run.
func unstarted(t *testing.T) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(inmem.NewState(), zap.NewNop())
	require.NoError(t, err)
	return rt
}

// TestRegistration_RefusedWithItsReason: every refusal is an invalid-class
// error that says why, and registers nothing.
func TestRegistration_RefusedWithItsReason(t *testing.T) {
	t.Parallel()

	ctrl := func(name string, inputs []controller.Input, outputs []controller.Output) *funcController {
		return &funcController{name: name, inputs: inputs, outputs: outputs}
	}
	qctrl := func(name string, s controller.QSettings) *funcQController {
		return &funcQController{name: name, settings: s}
	}
	primary := in(typeA, controller.InputQPrimary)

	for _, tc := range []struct {
		name string
		// existing are registered first and must succeed.
		existing []any
		// bad must be refused.
		bad any
		// want is a fragment of the error message.
		want string
	}{
		{name: "nil controller", bad: (*funcController)(nil), want: "nil controller"},
		{name: "nil interface", bad: controller.Controller(nil), want: "nil controller"},
		{name: "nil qcontroller", bad: (*funcQController)(nil), want: "nil controller"},
		{name: "empty name", bad: ctrl("", nil, nil), want: "empty name"},
		{name: "empty qcontroller name", bad: qctrl("", controller.QSettings{Inputs: []controller.Input{primary}}), want: "empty name"},
		{
			name:     "duplicate name",
			existing: []any{ctrl("dup", nil, nil)},
			bad:      ctrl("dup", nil, nil),
			want:     `"dup": a controller with this name is already registered`,
		},
		{
			name:     "duplicate name across families",
			existing: []any{ctrl("dup", nil, nil)},
			bad:      qctrl("dup", controller.QSettings{Inputs: []controller.Input{primary}}),
			want:     "already registered",
		},
		{
			name: "input with empty namespace",
			bad:  ctrl("c", []controller.Input{{Type: typeA}}, nil),
			want: "empty namespace or type",
		},
		{
			name: "input with empty type",
			bad:  ctrl("c", []controller.Input{{Namespace: testNS}}, nil),
			want: "empty namespace or type",
		},
		{
			name: "input with empty ID",
			bad:  ctrl("c", []controller.Input{{Namespace: testNS, Type: typeA, ID: optional.Some("")}}, nil),
			want: "empty ID",
		},
		{
			name: "controller with a QController input kind",
			bad:  ctrl("c", []controller.Input{in(typeA, controller.InputQPrimary)}, nil),
			want: `register controller "c": input As.test.resgraph.dev(test): a controller may not declare an input of kind InputQPrimary (it may: InputWeak, InputStrong, InputDestroyReady)`,
		},
		{
			name: "input kind out of range",
			bad:  ctrl("c", []controller.Input{in(typeA, 99)}, nil),
			want: "may not declare an input of kind InputKind(99)",
		},
		{
			name: "qcontroller with a Controller input kind",
			bad:  qctrl("q", controller.QSettings{Inputs: []controller.Input{primary, in(typeB, controller.InputWeak)}}),
			want: `register qcontroller "q": input Bs.test.resgraph.dev(test): a qcontroller may not declare an input of kind InputWeak (it may: InputQPrimary, InputQMapped, InputQMappedDestroyReady)`,
		},
		{
			name: "qcontroller without primary input",
			bad:  qctrl("q", controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQMapped)}}),
			want: "no input of kind InputQPrimary",
		},
		{
			name: "qcontroller with concurrency 0",
			bad:  qctrl("q", controller.QSettings{Inputs: []controller.Input{primary}, Concurrency: optional.Some[uint](0)}),
			want: "concurrency must be at least 1",
		},
		{
			name: "output with empty type",
			bad:  ctrl("c", nil, []controller.Output{{}}),
			want: "output with empty type",
		},
		{
			name: "output with invalid kind",
			bad:  ctrl("c", nil, []controller.Output{{Type: typeB, Kind: 7}}),
			want: `register controller "c": output "Bs.test.resgraph.dev" has the output kind OutputKind(7), neither OutputExclusive nor OutputShared`,
		},
		{
			name: "destroy-ready input on a type the controller does not output",
			bad:  ctrl("c", []controller.Input{in(typeA, controller.InputDestroyReady)}, []controller.Output{out(typeB, controller.OutputExclusive)}),
			want: `register controller "c": input As.test.resgraph.dev(test) of kind InputDestroyReady: the controller does not output As.test.resgraph.dev, ` +
				"and a destroy-ready input delivers only the controller's own outputs that are tearing down, so it would never fire; " +
				"declare As.test.resgraph.dev as an output, or use another input kind",
		},
		{
			name: "mapped destroy-ready input on a type the qcontroller does not output",
			bad:  qctrl("q", controller.QSettings{Inputs: []controller.Input{primary, in(typeB, controller.InputQMappedDestroyReady)}}),
			want: `register qcontroller "q": input Bs.test.resgraph.dev(test) of kind InputQMappedDestroyReady: the controller does not output Bs.test.resgraph.dev`,
		},
		{
			name: "output declared twice",
			bad:  ctrl("c", nil, []controller.Output{out(typeB, controller.OutputShared), out(typeB, controller.OutputShared)}),
			want: "declared twice",
		},
		{
			name:     "second exclusive owner",
			existing: []any{ctrl("first", nil, []controller.Output{out(typeB, controller.OutputExclusive)})},
			bad:      ctrl("second", nil, []controller.Output{out(typeB, controller.OutputExclusive)}),
			want:     `already exclusively owned by "first"`,
		},
		{
			name:     "second exclusive owner is a qcontroller",
			existing: []any{ctrl("first", nil, []controller.Output{out(typeB, controller.OutputExclusive)})},
			bad:      qctrl("second", controller.QSettings{Inputs: []controller.Input{primary}, Outputs: []controller.Output{out(typeB, controller.OutputExclusive)}}),
			want:     "already exclusively owned",
		},
		{
			name:     "exclusive output declared shared by another",
			existing: []any{ctrl("first", nil, []controller.Output{out(typeB, controller.OutputShared)})},
			bad:      ctrl("second", nil, []controller.Output{out(typeB, controller.OutputExclusive)}),
			want:     `declared shared by "first"`,
		},
		{
			name:     "shared output exclusively owned by another",
			existing: []any{ctrl("first", nil, []controller.Output{out(typeB, controller.OutputExclusive)})},
			bad:      ctrl("second", nil, []controller.Output{out(typeB, controller.OutputShared)}),
			want:     `exclusively owned by "first"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rt := unstarted(t)
			for _, c := range tc.existing {
				require.NoError(t, register(rt, c))
			}
			before, err := rt.GetDependencyGraph()
			require.NoError(t, err)

			err = register(rt, tc.bad)
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err), "error %v is not of the invalid class", err)
			assert.Contains(t, err.Error(), tc.want)
			assert.LessOrEqual(t, strings.Count(err.Error(), "register "), 1, "the message repeats its prefix: %v", err)

			after, err := rt.GetDependencyGraph()
			require.NoError(t, err)
			assert.Equal(t, before, after, "a refused registration registered something")
			assert.Len(t, rt.Observe().Controllers(), len(tc.existing))
		})
	}
}

func register(rt *runtime.Runtime, c any) error {
	switch c := c.(type) {
	case controller.QController:
		return rt.RegisterQController(c)
	case controller.Controller:
		return rt.RegisterController(c)
	default:
		return rt.RegisterController(nil)
	}
}

// TestRegistration_EveryInputKindOfItsFamily: each family registers with
// every input kind it may declare, shared outputs with two owners.
func TestRegistration_EveryInputKindOfItsFamily(t *testing.T) {
	t.Parallel()
	rt := unstarted(t)
	require.NoError(t, rt.RegisterController(&funcController{
		name:    "a",
		inputs:  []controller.Input{in(typeA, controller.InputWeak), in(typeA, controller.InputStrong), inID(typeB, "x", controller.InputDestroyReady)},
		outputs: []controller.Output{out(typeB, controller.OutputShared)},
	}))
	require.NoError(t, rt.RegisterController(&funcController{name: "b", outputs: []controller.Output{out(typeB, controller.OutputShared)}}), "two shared owners are fine")
	require.NoError(t, rt.RegisterQController(&funcQController{name: "q", settings: controller.QSettings{
		Inputs:      []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped), in(typeD, controller.InputQMappedDestroyReady)},
		Outputs:     []controller.Output{out(typeD, controller.OutputExclusive)},
		Concurrency: optional.Some[uint](3),
	}}))
	assert.Len(t, rt.Observe().Controllers(), 3)
}

// panickyDeclarations panics in the declaration method named by at.
type panickyDeclarations struct {
	funcQController
	at string
}

func (p *panickyDeclarations) Name() string {
	if p.at == "Name" {
		panic("Name exploded")
	}
	return "panicky"
}

func (p *panickyDeclarations) Inputs() []controller.Input {
	if p.at == "Inputs" {
		panic("Inputs exploded")
	}
	return nil
}

func (p *panickyDeclarations) Outputs() []controller.Output {
	if p.at == "Outputs" {
		panic("Outputs exploded")
	}
	return nil
}

func (p *panickyDeclarations) Run(ctx context.Context, _ controller.Runtime, _ *zap.Logger) error {
	<-ctx.Done()
	return nil
}

func (p *panickyDeclarations) Settings() controller.QSettings {
	if p.at == "Settings" {
		panic("Settings exploded")
	}
	return controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary)}}
}

// TestRegistration_PanickingDeclarationsAreRefused: a panic in a
// controller's declarations (user code) is a refused registration, not a
// crash, and the Runtime still registers others.
func TestRegistration_PanickingDeclarationsAreRefused(t *testing.T) {
	t.Parallel()
	rt := unstarted(t)
	for _, at := range []string{"Name", "Inputs", "Outputs"} {
		err := rt.RegisterController(&panickyDeclarations{at: at})
		require.Error(t, err, at)
		assert.True(t, state.IsInvalidError(err), "%s: %v", at, err)
		assert.Contains(t, err.Error(), at+" exploded")
	}
	for _, at := range []string{"Name", "Settings"} {
		err := rt.RegisterQController(&panickyDeclarations{at: at})
		require.Error(t, err, at)
		assert.True(t, state.IsInvalidError(err), "%s: %v", at, err)
		assert.Contains(t, err.Error(), at+" exploded")
	}
	assert.Empty(t, rt.Observe().Controllers(), "nothing was registered")
	require.NoError(t, rt.RegisterController(&funcController{name: "fine"}))
}
