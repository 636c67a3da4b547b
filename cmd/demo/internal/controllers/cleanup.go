package controllers

import (
	"github.com/resgraph/resgraph/pkg/generic/cleanup"
	"github.com/resgraph/resgraph/pkg/resource"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// NewLinkStatusCleanupController returns the controller that holds a
// finalizer on every LinkStatus and releases a tearing-down one only once
// no AddressSpec of its link is left: a link's addresses go before its
// status.
func NewLinkStatusCleanupController() *cleanup.Controller[*netres.LinkStatus, *netres.AddressSpec] {
	return cleanup.NewController(cleanup.Settings[*netres.LinkStatus, *netres.AddressSpec]{
		Name: LinkStatusCleanupControllerName,
		DependentsQuery: func(in *netres.LinkStatus) []resource.LabelQueryOption {
			return []resource.LabelQueryOption{resource.LabelEqual(netres.LinkLabel, in.Metadata().ID())}
		},
	})
}

// NewAddressCleanupController returns the controller that holds a finalizer
// on every AddressSpec and releases a tearing-down one only once no
// RouteSpec goes through it (static or default): routes go before their
// addresses.
func NewAddressCleanupController() *cleanup.Controller[*netres.AddressSpec, *netres.RouteSpec] {
	return cleanup.NewController(cleanup.Settings[*netres.AddressSpec, *netres.RouteSpec]{
		Name: AddressCleanupControllerName,
		DependentsQuery: func(in *netres.AddressSpec) []resource.LabelQueryOption {
			return []resource.LabelQueryOption{resource.LabelEqual(netres.AddressLabel, in.Metadata().ID())}
		},
	})
}
