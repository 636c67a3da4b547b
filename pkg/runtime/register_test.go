package runtime

import (
	"context"
	"testing"

	"github.com/siderolabs/gen/optional"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestC1_RegistrationErrors(t *testing.T) {
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
			want: "invalid input kind",
		},
		{
			name: "input kind out of range",
			bad:  ctrl("c", []controller.Input{in(typeA, 99)}, nil),
			want: "invalid input kind",
		},
		{
			name: "qcontroller with a Controller input kind",
			bad:  qctrl("q", controller.QSettings{Inputs: []controller.Input{primary, in(typeB, controller.InputWeak)}}),
			want: "invalid input kind",
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
			want: "invalid kind",
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
			rt, _ := newEngine(t)
			for _, c := range tc.existing {
				require.NoError(t, register(rt, c))
			}
			before, err := rt.GetDependencyGraph()
			require.NoError(t, err)

			err = register(rt, tc.bad)
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err), "error %v is not of the invalid class", err)
			assert.Contains(t, err.Error(), tc.want)

			after, err := rt.GetDependencyGraph()
			require.NoError(t, err)
			assert.Equal(t, before, after, "a refused registration registered something")
			assert.Len(t, rt.ControllerStatuses(), len(tc.existing))
		})
	}
}

func register(rt *Runtime, c any) error {
	switch c := c.(type) {
	case controller.QController:
		return rt.RegisterQController(c)
	case controller.Controller:
		return rt.RegisterController(c)
	default:
		return rt.RegisterController(nil)
	}
}

func TestC1_ValidRegistrations(t *testing.T) {
	t.Parallel()
	rt, _ := newEngine(t)
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
	assert.Len(t, rt.ControllerStatuses(), 3)
}

func TestE2_DependencyGraphSortedWithDynamicInputs(t *testing.T) {
	t.Parallel()
	rt, _ := newEngine(t)
	c, runtimes := captureRuntime("b-ctrl",
		[]controller.Input{in(typeC, controller.InputWeak), inID(typeA, "z", controller.InputStrong), inID(typeA, "y", controller.InputStrong)},
		[]controller.Output{out(typeE, controller.OutputShared), out(typeD, controller.OutputExclusive)})
	require.NoError(t, rt.RegisterController(c))
	require.NoError(t, rt.RegisterQController(&funcQController{name: "a-q", settings: controller.QSettings{
		Inputs:  []controller.Input{in(typeB, controller.InputQMapped), in(typeA, controller.InputQPrimary)},
		Outputs: []controller.Output{out(typeC, controller.OutputExclusive)},
	}}))
	startEngine(t, rt)
	r := recvWithin(t, runtimes)
	require.NoError(t, r.UpdateInputs([]controller.Input{in(typeB, controller.InputWeak)}))

	g, err := rt.GetDependencyGraph()
	require.NoError(t, err)
	assert.Equal(t, []controller.DependencyEdge{
		{ControllerName: "a-q", ResourceType: typeC, EdgeType: controller.EdgeOutputExclusive},
		{ControllerName: "a-q", ResourceNamespace: testNS, ResourceType: typeA, EdgeType: controller.EdgeInputQPrimary},
		{ControllerName: "a-q", ResourceNamespace: testNS, ResourceType: typeB, EdgeType: controller.EdgeInputQMapped},
		{ControllerName: "b-ctrl", ResourceType: typeD, EdgeType: controller.EdgeOutputExclusive},
		{ControllerName: "b-ctrl", ResourceType: typeE, EdgeType: controller.EdgeOutputShared},
		{ControllerName: "b-ctrl", ResourceNamespace: testNS, ResourceType: typeA, ResourceID: "y", EdgeType: controller.EdgeInputStrong},
		{ControllerName: "b-ctrl", ResourceNamespace: testNS, ResourceType: typeA, ResourceID: "z", EdgeType: controller.EdgeInputStrong},
		{ControllerName: "b-ctrl", ResourceNamespace: testNS, ResourceType: typeB, EdgeType: controller.EdgeInputWeak},
		{ControllerName: "b-ctrl", ResourceNamespace: testNS, ResourceType: typeC, EdgeType: controller.EdgeInputWeak},
	}, g.Edges)
}

// TestE2_InputDeclaredStaticallyAndDynamicallyIsOneEdge: an input that
// UpdateInputs declares again (same kind) is one edge; the same resources
// under another input kind are an edge of that other type.
func TestE2_InputDeclaredStaticallyAndDynamicallyIsOneEdge(t *testing.T) {
	t.Parallel()
	rt, _ := newEngine(t)
	c, runtimes := captureRuntime("c",
		[]controller.Input{in(typeA, controller.InputWeak), inID(typeB, "x", controller.InputStrong)}, nil)
	require.NoError(t, rt.RegisterController(c))
	startEngine(t, rt)
	r := recvWithin(t, runtimes)
	require.NoError(t, r.UpdateInputs([]controller.Input{
		in(typeA, controller.InputWeak),          // static too: one edge
		inID(typeB, "x", controller.InputStrong), // static too: one edge
		in(typeA, controller.InputStrong),        // another kind: its own edge
		inID(typeB, "y", controller.InputStrong), // another ID: its own edge
		in(typeC, controller.InputWeak),          // dynamic only
		in(typeC, controller.InputWeak),          // declared twice: one edge
	}))

	g, err := rt.GetDependencyGraph()
	require.NoError(t, err)
	assert.Equal(t, []controller.DependencyEdge{
		{ControllerName: "c", ResourceNamespace: testNS, ResourceType: typeA, EdgeType: controller.EdgeInputStrong},
		{ControllerName: "c", ResourceNamespace: testNS, ResourceType: typeB, ResourceID: "x", EdgeType: controller.EdgeInputStrong},
		{ControllerName: "c", ResourceNamespace: testNS, ResourceType: typeB, ResourceID: "y", EdgeType: controller.EdgeInputStrong},
		{ControllerName: "c", ResourceNamespace: testNS, ResourceType: typeA, EdgeType: controller.EdgeInputWeak},
		{ControllerName: "c", ResourceNamespace: testNS, ResourceType: typeC, EdgeType: controller.EdgeInputWeak},
	}, g.Edges)
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

// A panic in a controller's declarations (user code) is a refused
// registration, not a crash, and the engine still registers others.
func TestC1_PanickingDeclarationsAreRefused(t *testing.T) {
	t.Parallel()
	rt, _ := newEngine(t)
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
	assert.Empty(t, rt.ControllerStatuses(), "nothing was registered")
	require.NoError(t, rt.RegisterController(&funcController{name: "fine"}))
}
