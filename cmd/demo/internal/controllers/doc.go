// Package controllers holds the demo network agent's controllers and
// [Register], which registers all of them with a Runtime.
//
// The pipeline, left to right (generic controllers marked):
//
//	kernel ──▶ KernelLinkObserver ──▶ KernelLink ─┐
//	LinkSpec (user intent) ───────────────────────┴▶ LinkApplyController (qtransform) ──▶ LinkStatus
//	LinkSpec + LinkStatus (up) ──▶ AddressController (+ destroy.Wrap) ──▶ AddressSpec
//	AddressSpec (with gateway) ──▶ DefaultRouteController (transform) ──▶ RouteSpec (shared)
//	LinkSpec + AddressSpec ──▶ StaticRouteController ──▶ RouteSpec (shared)
//	LinkSpec + LinkStatus (up) ──▶ ResolverController ──▶ ResolverConfig
//	LinkStatusCleanupController (cleanup): a LinkStatus outlives its link's AddressSpecs
//	AddressCleanupController (cleanup): an AddressSpec outlives the RouteSpecs through it
//
// Deleting a LinkSpec tears everything it caused down in dependency order,
// held together by finalizers: LinkApplyController (with input finalizers)
// holds the LinkSpec until its LinkStatus is destroyed and the kernel link
// deleted; LinkStatusCleanupController holds the LinkStatus until the
// link's addresses are gone; AddressCleanupController holds each address
// until the routes through it are gone. So routes go first, then
// addresses, then the status, then the spec. A link whose carrier goes down
// loses its addresses and routes in the same order, and gets them back when
// the carrier returns.
//
// # Known issues
//
// StaticRouteController reads the addresses, then writes the routes
// through them: an address torn down, released by AddressCleanupController
// (no route through it yet) and destroyed between the two leaves a route
// through it until the controller's next pass, which the address's
// changes wake and which destroys it (on the live Runtime only: in the
// simulator a pass is one step, nothing runs inside it;
// TestStaticRoute_AnAddressDestroyedDuringThePassLeavesItsRouteUntilTheNextPass).
// Closing the window needs the route's writer to hold the address itself
// (a finalizer of its own, added while the address runs, which makes the
// address a strong input of StaticRouteController).
package controllers

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// Controller names; each is also the owner of what the controller writes
// and the name of the finalizers it holds.
const (
	KernelLinkObserverName          = "KernelLinkObserver"
	LinkApplyControllerName         = "LinkApplyController"
	AddressControllerName           = "AddressController"
	DefaultRouteControllerName      = "DefaultRouteController"
	StaticRouteControllerName       = "StaticRouteController"
	ResolverControllerName          = "ResolverController"
	LinkStatusCleanupControllerName = "LinkStatusCleanupController"
	AddressCleanupControllerName    = "AddressCleanupController"
)

// Names returns the name of every controller [Register] registers, sorted.
func Names() []string {
	return []string{
		AddressCleanupControllerName,
		AddressControllerName,
		DefaultRouteControllerName,
		KernelLinkObserverName,
		LinkApplyControllerName,
		LinkStatusCleanupControllerName,
		ResolverControllerName,
		StaticRouteControllerName,
	}
}

func input(typ resource.Type, kind controller.InputKind) controller.Input {
	return controller.Input{Namespace: netres.NamespaceOf(typ), Type: typ, Kind: kind}
}

func ptr(typ resource.Type, id resource.ID) resource.Pointer {
	return resource.NewPointer(netres.NamespaceOf(typ), typ, id)
}
