package scenario

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/cleanup"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest/sim"

	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// Mutant is [Simulation] with a deliberate bug in the agent, wanted to
// fail (WantFailure): its AddressCleanupController waits, before it lets
// a tearing-down AddressSpec go, for the routes labelled with the
// address's link name instead of its ID — no route carries such a label,
// so an address goes while routes still go through it, which the
// invariant "a RouteSpec goes before the AddressSpec it goes through"
// catches once a carrier is lost or a link deleted. It shows what the
// simulator makes of a bug met in production: a recording of the agent
// replayed with it (-sim.recording) fails, and the failure is shrunk to
// the fewest recorded changes that still fail.
func Mutant() sim.Scenario {
	sc := Simulation()
	sc.Name = "demo with a mutant AddressCleanupController"
	sc.WantFailure = true
	setup := sc.Setup
	sc.Setup = func(w *sim.World) (sim.System, error) {
		sys, err := setup(w)
		if err != nil {
			return sys, err
		}
		register := sys.Register
		sys.Register = func(e controller.Engine) error {
			return register(swapped{Engine: e, name: controllers.AddressCleanupControllerName, by: mutantAddressCleanup()})
		}
		return sys, nil
	}
	return sc
}

// mutantAddressCleanup is the agent's AddressCleanupController with the
// wrong dependents' query (see Mutant).
func mutantAddressCleanup() controller.Controller {
	return cleanup.NewController(cleanup.Settings[*netres.AddressSpec, *netres.RouteSpec]{
		Name: controllers.AddressCleanupControllerName,
		DependentsQuery: func(in *netres.AddressSpec) []resource.LabelQueryOption {
			return []resource.LabelQueryOption{resource.LabelEqual(netres.AddressLabel, in.TypedSpec().Link)}
		},
	})
}

// swapped is an engine that registers by in place of the controller
// named name.
type swapped struct {
	controller.Engine
	name string
	by   controller.Controller
}

func (e swapped) RegisterController(c controller.Controller) error {
	if c.Name() == e.name {
		c = e.by
	}
	return e.Engine.RegisterController(c)
}
