package controllers

import (
	"context"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// NewDefaultRouteController returns the controller that derives a default
// route from every address carrying its link's gateway, once
// AddressCleanupController holds the address: a transform from AddressSpec
// to RouteSpec (a shared output, see StaticRouteController).
// The transform destroys the route as soon as its address starts tearing
// down; the route carries netres.AddressLabel, so AddressCleanupController
// keeps the address until then.
func NewDefaultRouteController() *transform.Controller[*netres.AddressSpec, *netres.RouteSpec] {
	return transform.NewController(transform.Settings[*netres.AddressSpec, *netres.RouteSpec]{
		Name: DefaultRouteControllerName,
		MapMetadataOptionalFunc: func(in *netres.AddressSpec) optional.Optional[*netres.RouteSpec] {
			route, ok := netres.PlanDefaultRoute(*in.TypedSpec())
			if !ok || !in.Metadata().Finalizers().Has(AddressCleanupControllerName) {
				return optional.None[*netres.RouteSpec]()
			}
			return optional.Some(netres.NewRouteSpec(netres.RouteID(route.Link, route.Destination)))
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in *netres.AddressSpec, out *netres.RouteSpec) error {
			route, _ := netres.PlanDefaultRoute(*in.TypedSpec())
			out.Metadata().Labels().Set(netres.LinkLabel, route.Link)
			out.Metadata().Labels().Set(netres.AddressLabel, in.Metadata().ID())
			*out.TypedSpec() = route
			return nil
		},
	},
		transform.WithOutputKind(controller.OutputShared),
	)
}
