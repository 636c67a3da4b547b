package controllers

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// StaticRouteController writes a RouteSpec for every static route of the
// intent whose gateway is reachable through a running AddressSpec that
// AddressCleanupController holds (so that the address cannot go before the
// route), and
// destroys its routes that no longer are (output tracking). RouteSpec is a
// shared output: DefaultRouteController writes RouteSpecs too, and each
// controller manages only its own.
//
// Routes carry netres.AddressLabel, naming the address they go through, so
// that AddressCleanupController keeps that address until they are gone.
type StaticRouteController struct{}

// Name implements controller.Controller.
func (StaticRouteController) Name() string { return StaticRouteControllerName }

// Inputs implements controller.Controller.
func (StaticRouteController) Inputs() []controller.Input {
	return []controller.Input{
		input(netres.AddressSpecType, controller.InputWeak),
		input(netres.LinkSpecType, controller.InputWeak),
	}
}

// Outputs implements controller.Controller.
func (StaticRouteController) Outputs() []controller.Output {
	return []controller.Output{{Type: netres.RouteSpecType, Kind: controller.OutputShared}}
}

// Run implements controller.Controller.
func (c StaticRouteController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	return runLoop(ctx, r, nil, c.reconcile)
}

func (StaticRouteController) reconcile(ctx context.Context, r controller.Runtime) error {
	addrs, err := safe.ReaderListAll[*netres.AddressSpec](ctx, r)
	if err != nil {
		return err
	}
	byLink := make(map[string][]netres.AddressSpecSpec)
	for a := range addrs.All() {
		if a.Metadata().Phase() == resource.PhaseRunning && a.Metadata().Finalizers().Has(AddressCleanupControllerName) {
			byLink[a.TypedSpec().Link] = append(byLink[a.TypedSpec().Link], *a.TypedSpec())
		}
	}
	specs, err := safe.ReaderListAll[*netres.LinkSpec](ctx, r)
	if err != nil {
		return err
	}

	r.StartTrackingOutputs()
	for s := range specs.All() {
		if s.Metadata().Phase() != resource.PhaseRunning {
			continue
		}
		link := s.Metadata().ID()
		for _, pr := range netres.PlanStaticRoutes(link, *s.TypedSpec(), byLink[link]) {
			id := netres.RouteID(link, pr.Route.Destination)
			if err := modifyOutput(ctx, r, func() *netres.RouteSpec { return netres.NewRouteSpec(id) }, func(out *netres.RouteSpec) error {
				out.Metadata().Labels().Set(netres.LinkLabel, link)
				out.Metadata().Labels().Set(netres.AddressLabel, pr.AddressID)
				*out.TypedSpec() = pr.Route
				return nil
			}); err != nil {
				return fmt.Errorf("write route %s: %w", id, err)
			}
		}
	}
	return r.CleanupOutputs(ctx, resource.NewKind(netres.Namespace, netres.RouteSpecType))
}
