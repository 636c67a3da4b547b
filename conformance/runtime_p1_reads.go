package conformance

import (
	"context"
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// p1Namespaces are the two namespaces of TestP1_ControllerReadsItsOwnWritesAcrossNamespaces:
// over a routed state (rule P1), route them to different backends, and
// cache their IntResource kinds in the Runtime, so that the test reads
// through every read path of the Runtime across two backends.
var p1Namespaces = [2]resource.Namespace{DefaultNamespace, "elsewhere"}

// p1Rounds is how many times the probe writes and reads back each output.
const p1Rounds = 20

// TestP1_ControllerReadsItsOwnWritesAcrossNamespaces: a controller whose
// outputs live in two namespaces (two backends of a routed state) reads
// its own writes in both, whatever each backend numbers its changes
// with: after each Modify of an output, a Get (a copy and a read-only
// snapshot) and a List of its kind return what it wrote, round after
// round, alternating between the namespaces.
func (s *RuntimeSuite) TestP1_ControllerReadsItsOwnWritesAcrossNamespaces() {
	s.inBubble(func(e *runtimeEnv) {
		accesses := make([]Access, 0, 2*p1Rounds)
		for round := 1; round <= p1Rounds; round++ {
			for _, ns := range p1Namespaces {
				accesses = append(accesses, Access{
					Name: fmt.Sprintf("round %d in %s", round, ns),
					Do: func(ctx context.Context, rw controller.ReaderWriter) error {
						return writeAndReadBack(ctx, rw, ns, round)
					},
				})
			}
		}
		probe := &AccessProbeController{
			ControllerName:    "p1-probe",
			ControllerInputs:  []controller.Input{input(SumNamespace, IntResourceType, controller.InputWeak)},
			ControllerOutputs: []controller.Output{{Type: IntResourceType, Kind: controller.OutputExclusive}},
			Accesses:          accesses,
		}
		e.registerController(probe)
		e.start()
		for name, err := range e.probeResults(probe.Results) {
			e.assert.NoError(err, "P1: %s", name)
		}
		for _, ns := range p1Namespaces {
			r, err := e.state.Get(e.ctx, resource.NewPointer(ns, IntResourceType, "mine"))
			if e.assert.NoError(err) {
				e.assert.Equal(p1Rounds, r.(*IntResource).TypedSpec().Value, "P1: the last write in %s is stored", ns)
			}
		}
	})
}

// writeAndReadBack writes round into the output "mine" of ns and checks
// that the controller reads it back: Get, read-only Get and List.
func writeAndReadBack(ctx context.Context, rw controller.ReaderWriter, ns resource.Namespace, round int) error {
	err := rw.Modify(ctx, NewIntResource(ns, "mine", 0), func(r resource.Resource) error {
		r.(*IntResource).TypedSpec().Value = round
		return nil
	})
	if err != nil {
		return err
	}
	p := resource.NewPointer(ns, IntResourceType, "mine")
	for _, opts := range [][]state.GetOption{nil, {state.WithReadOnlyGet()}} {
		r, err := rw.Get(ctx, p, opts...)
		if err != nil {
			return fmt.Errorf("get after the write: %w", err)
		}
		if v := r.(*IntResource).TypedSpec().Value; v != round {
			return fmt.Errorf("get read %d after writing %d", v, round)
		}
	}
	l, err := rw.List(ctx, resource.NewKind(ns, IntResourceType))
	if err != nil {
		return fmt.Errorf("list after the write: %w", err)
	}
	for _, r := range l.Items {
		if r.Metadata().ID() == "mine" && r.(*IntResource).TypedSpec().Value == round {
			return nil
		}
	}
	return fmt.Errorf("list after writing %d does not hold it", round)
}
