package runtime_test

import (
	"bytes"
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// typedState is an inmem state that can store every type but one
// (state.TypeValidator), as a persistent state whose codec does not know
// that type.
type typedState struct {
	forwardingState
	refused resource.Type
}

func (s typedState) ValidateType(k resource.Kind) error {
	if k.Type() == s.refused {
		return state.NewInvalidError(nil, "type %q is not registered: register it in the codec", k.Type())
	}
	return nil
}

// TestG2_TypesTheStateCannotStoreAreRefused: an input or an output of a
// type the state cannot store (state.TypeValidator) is refused at
// registration — and a dynamic input by UpdateInputs — with an
// invalid-class error that names the controller, the input or output and
// the state's reason (its fix); nothing is registered.
func TestG2_TypesTheStateCannotStoreAreRefused(t *testing.T) {
	st := typedState{forwardingState: forwardingState{inmem.NewState()}, refused: typeC}
	rt, err := runtime.New(st, zap.NewNop())
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		ctrl any
		want string
	}{
		{"controller input", &funcController{name: "c", inputs: []controller.Input{in(typeC, controller.InputWeak)}},
			`register controller "c": input Cs.test.resgraph.dev(test): the state cannot store this type: type "Cs.test.resgraph.dev" is not registered: register it in the codec`},
		{"controller output", &funcController{name: "c", outputs: []controller.Output{out(typeC, controller.OutputExclusive)}},
			`register controller "c": output Cs.test.resgraph.dev: the state cannot store this type: type "Cs.test.resgraph.dev" is not registered: register it in the codec`},
		{"qcontroller input", &funcQController{name: "q", settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeC, controller.InputQMapped)}}},
			`register qcontroller "q": input Cs.test.resgraph.dev(test): the state cannot store this type`},
		{"qcontroller output", &funcQController{name: "q", settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary)}, Outputs: []controller.Output{out(typeC, controller.OutputShared)}}},
			`register qcontroller "q": output Cs.test.resgraph.dev: the state cannot store this type`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := register(rt, tc.ctrl)
			require.Error(t, err)
			assert.True(t, state.IsInvalidError(err), "%v", err)
			assert.Contains(t, err.Error(), tc.want)
			g, _ := rt.GetDependencyGraph()
			assert.Empty(t, g.Edges, "nothing registered")
		})
	}

	synctest.Test(t, func(t *testing.T) {
		c, rts := captureRuntime("dyn", []controller.Input{in(typeA, controller.InputWeak)}, nil)
		start(t, runtimetest.WithState(st), runtimetest.WithControllers(c))
		r := <-rts
		err := r.UpdateInputs([]controller.Input{in(typeC, controller.InputWeak)})
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `update inputs of controller "dyn": input Cs.test.resgraph.dev(test): the state cannot store this type`)
		require.NoError(t, r.UpdateInputs([]controller.Input{in(typeB, controller.InputWeak)}), "a type it can store")
		err = r.UpdateInputs([]controller.Input{in(typeB, controller.InputDestroyReady)})
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `update inputs of controller "dyn": input Bs.test.resgraph.dev(test) of kind InputDestroyReady: the controller does not output Bs.test.resgraph.dev`)
	})
}

// TestG2_InputWithNoWriterIsSaid: an input kind that no registered
// controller outputs is allowed, and said — one WARN when Run starts that
// names the kind and the controllers reading it, a NoWriter mark on the
// graph's edge, and a line in the controller's explanation — while an
// input some controller writes (in its namespace, or in any) is not; a
// namespace typo is caught as such. A controller registered during Run
// with such an input is said once too, and registering a writer clears
// the mark.
func TestG2_InputWithNoWriterIsSaid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.WarnLevel)
		writer := &funcController{name: "writer", outputs: []controller.Output{{Type: typeB, Kind: controller.OutputExclusive, Namespace: "network-config"}}}
		anyNS := &funcController{name: "anyNS", outputs: []controller.Output{out(typeD, controller.OutputShared)}}
		reader := &funcController{name: "reader", inputs: []controller.Input{
			in(typeA, controller.InputWeak),                                        // written by nobody (outside writers)
			{Namespace: "network-config", Type: typeB, Kind: controller.InputWeak}, // written by writer
			{Namespace: "network-cfg", Type: typeB, Kind: controller.InputStrong},  // a typo: nobody
			in(typeD, controller.InputWeak),                                        // written by anyNS, in any namespace
		}}
		q := &funcQController{name: "q", settings: primaryOf(typeA)}
		e := start(t, runtimetest.WithLogger(zap.New(core)), runtimetest.WithControllers(writer, anyNS, reader), runtimetest.WithQControllers(q))

		warns := logs.FilterMessage("no controller writes this input kind; only outside writers wake it").All()
		require.Len(t, warns, 2, "one WARN per kind: %v", logs.All())
		assert.Equal(t, map[string]any{"kind": "Bs.test.resgraph.dev(network-cfg)", "controllers": []any{"reader"}}, warns[0].ContextMap())
		assert.Equal(t, map[string]any{"kind": "As.test.resgraph.dev(test)", "controllers": []any{"q", "reader"}}, warns[1].ContextMap())
		assert.Equal(t, zapcore.WarnLevel, warns[0].Level)

		g, err := e.Runtime.GetDependencyGraph()
		require.NoError(t, err)
		marked := map[string]bool{}
		for _, edge := range g.Edges {
			if !edge.EdgeType.IsOutput() {
				marked[edge.ControllerName+" "+resource.KindString(resource.NewKind(edge.ResourceNamespace, edge.ResourceType))] = edge.NoWriter
			}
		}
		assert.Equal(t, map[string]bool{
			"q As.test.resgraph.dev(test)":                true,
			"reader As.test.resgraph.dev(test)":           true,
			"reader Bs.test.resgraph.dev(network-cfg)":    true,
			"reader Bs.test.resgraph.dev(network-config)": false,
			"reader Ds.test.resgraph.dev(test)":           false,
		}, marked)

		x, err := e.Runtime.Observe().ExplainController(context.Background(), "reader")
		require.NoError(t, err)
		var text bytes.Buffer
		require.NoError(t, explain.WriteText(&text, x))
		assert.Contains(t, text.String(), "InputWeak As.test.resgraph.dev(test) (no controller writes this kind; only outside writers wake this input)")
		assert.Contains(t, text.String(), "InputStrong Bs.test.resgraph.dev(network-cfg) (no controller writes this kind; only outside writers wake this input)")
		assert.Contains(t, text.String(), "InputWeak Bs.test.resgraph.dev(network-config) (written by writer)")
		assert.Contains(t, x.Notes, "input As.test.resgraph.dev(test): no controller writes this kind; only outside writers wake this input")

		// During Run: a new reader of an unwritten kind is said once; a
		// writer of A clears the marks of A.
		late := &funcController{name: "late", inputs: []controller.Input{in(typeE, controller.InputWeak)}}
		require.NoError(t, e.Runtime.RegisterController(late))
		require.NoError(t, e.Runtime.RegisterController(&funcController{name: "late2", inputs: []controller.Input{in(typeE, controller.InputWeak)}}))
		warns = logs.FilterMessage("no controller writes this input kind; only outside writers wake it").All()
		require.Len(t, warns, 4)
		assert.Equal(t, map[string]any{"kind": "Es.test.resgraph.dev(test)", "controllers": []any{"late"}}, warns[2].ContextMap())
		require.NoError(t, e.Runtime.RegisterController(&funcController{name: "aWriter", outputs: []controller.Output{out(typeA, controller.OutputShared)}}))
		g, err = e.Runtime.GetDependencyGraph()
		require.NoError(t, err)
		for _, edge := range g.Edges {
			if edge.ResourceType == typeA {
				assert.False(t, edge.NoWriter, "%+v", edge)
			}
		}
		assert.Len(t, logs.FilterMessage("no controller writes this input kind; only outside writers wake it").All(), 4, "nothing said twice")
	})
}

// TestG2_ClosedGraphRefusesInputsWithNoWriter: with WithClosedGraph, Run
// fails at once (no controller runs) with an invalid-class error naming
// each controller and kind that no controller writes; a registration or an
// UpdateInputs during Run that would add one is refused; a graph whose
// every input is written runs.
func TestG2_ClosedGraphRefusesInputsWithNoWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ran := false
		reader := &funcController{name: "reader", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, _ controller.Runtime, _ *zap.Logger) error {
				ran = true
				<-ctx.Done()
				return nil
			}}
		rt, err := runtime.New(inmem.NewState(), zap.NewNop(), runtime.WithClosedGraph())
		require.NoError(t, err)
		require.NoError(t, rt.RegisterController(reader))
		err = rt.Run(context.Background())
		require.Error(t, err, "Run fails at once")
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `runtime: Run: controller "reader": input As.test.resgraph.dev(test): no controller writes this kind; only outside writers wake this input`)
		assert.Contains(t, err.Error(), "WithClosedGraph")
		synctest.Wait()
		assert.False(t, ran, "nothing ran")
		assert.Error(t, rt.RegisterController(&funcController{name: "after"}), "the Runtime is stopped")

		writer := &funcController{name: "writer", outputs: []controller.Output{out(typeA, controller.OutputExclusive)}}
		c, rts := captureRuntime("dyn", []controller.Input{in(typeA, controller.InputWeak)}, nil)
		e := start(t, runtimetest.WithRuntimeOptions(runtime.WithClosedGraph()), runtimetest.WithControllers(writer, c))
		r := <-rts
		err = e.Runtime.RegisterController(&funcController{name: "late", inputs: []controller.Input{in(typeB, controller.InputWeak)}})
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Contains(t, err.Error(), `register controller "late": controller "late": input Bs.test.resgraph.dev(test): no controller writes this kind`)
		err = r.UpdateInputs([]controller.Input{in(typeB, controller.InputWeak)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `update inputs of controller "dyn": controller "dyn": input Bs.test.resgraph.dev(test)`)
		g, _ := e.Runtime.GetDependencyGraph()
		for _, edge := range g.Edges {
			assert.NotEqual(t, "late", edge.ControllerName, "refused: not registered")
			assert.NotEqual(t, typeB, edge.ResourceType, "refused: not declared")
		}
	})
}

// TestG2_DeclaredOutsideWriterIsExpected: an input kind declared with
// WithOutsideWriters is not warned about, its edges are marked
// OutsideWriter (not NoWriter), explain says it is written outside, and
// WithClosedGraph accepts it; an undeclared one is still said. A kind
// with an empty type is refused by New.
func TestG2_DeclaredOutsideWriterIsExpected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zapcore.WarnLevel)
		reader := &funcController{name: "reader", inputs: []controller.Input{
			in(typeA, controller.InputWeak), // declared
			in(typeB, controller.InputWeak), // not declared
		}}
		q := &funcQController{name: "q", settings: primaryOf(typeA)}
		e := start(t, runtimetest.WithLogger(zap.New(core)), runtimetest.WithControllers(reader), runtimetest.WithQControllers(q),
			runtimetest.WithOutsideWriters(resource.NewKind("test", typeA)))

		warns := logs.FilterMessage("no controller writes this input kind; only outside writers wake it").All()
		require.Len(t, warns, 1, "only the undeclared kind is warned about: %v", logs.All())
		assert.Equal(t, "Bs.test.resgraph.dev(test)", warns[0].ContextMap()["kind"])

		g, err := e.Runtime.GetDependencyGraph()
		require.NoError(t, err)
		for _, edge := range g.Edges {
			switch {
			case edge.EdgeType.IsOutput():
			case edge.ResourceType == typeA:
				assert.True(t, edge.OutsideWriter, "%+v", edge)
				assert.False(t, edge.NoWriter, "%+v", edge)
			default:
				assert.True(t, edge.NoWriter, "%+v", edge)
				assert.False(t, edge.OutsideWriter, "%+v", edge)
			}
		}
		x, err := e.Runtime.Observe().ExplainController(context.Background(), "reader")
		require.NoError(t, err)
		var text bytes.Buffer
		require.NoError(t, explain.WriteText(&text, x))
		assert.Contains(t, text.String(), "InputWeak As.test.resgraph.dev(test) (written outside the Runtime, as declared (WithOutsideWriters))")

		closed := start(t, runtimetest.WithRuntimeOptions(runtime.WithClosedGraph()), runtimetest.WithQControllers(&funcQController{name: "q2", settings: primaryOf(typeA)}),
			runtimetest.WithOutsideWriters(resource.NewKind("test", typeA)))
		runtimetest.Settle(t, closed.Runtime) // runs: the closed graph accepts the declared kind

		_, err = runtime.New(inmem.NewState(), zap.NewNop(), runtime.WithOutsideWriters(resource.NewKind("test", "")))
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
	})
}
