package qtransform_test

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// Three resource types: a Link has an MTU, an Address is derived from a
// Link, and a Route from an Address.
type (
	LinkSpec    struct{ MTU int }
	AddressSpec struct{ MTU int }
	RouteSpec   struct{ MTU int }
	LinkDef     struct{}
	AddressDef  struct{}
	RouteDef    struct{}
	Link        = typed.Resource[LinkSpec, LinkDef]
	Address     = typed.Resource[AddressSpec, AddressDef]
	Route       = typed.Resource[RouteSpec, RouteDef]
)

func (LinkDef) Definition() typed.Definition {
	return typed.Definition{Type: "Links.example.resgraph.dev", DefaultNamespace: "network"}
}

func (AddressDef) Definition() typed.Definition {
	return typed.Definition{Type: "Addresses.example.resgraph.dev", DefaultNamespace: "network"}
}

func (RouteDef) Definition() typed.Definition {
	return typed.Definition{Type: "Routes.example.resgraph.dev", DefaultNamespace: "network"}
}

// A chain of two QControllers: every Link gets an Address with the Link's
// MTU minus 20, and every Address a Route with the same MTU. Destroying the
// Link tears the chain down: the Address holds a finalizer of the second
// controller until its Route is destroyed.
func Example() {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		panic(err)
	}

	linkToAddress := qtransform.NewQController(qtransform.Settings[*Link, *Address]{
		Name: "LinkToAddress",
		MapMetadataFunc: func(link *Link) *Address {
			return typed.NewDefault[AddressSpec, AddressDef](link.Metadata().ID(), AddressSpec{})
		},
		UnmapMetadataFunc: func(addr *Address) *Link {
			return typed.NewDefault[LinkSpec, LinkDef](addr.Metadata().ID(), LinkSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, link *Link, addr *Address) error {
			addr.TypedSpec().MTU = link.TypedSpec().MTU - 20
			return nil
		},
	}, qtransform.WithConcurrency(2))
	addressToRoute := qtransform.NewQController(qtransform.Settings[*Address, *Route]{
		Name: "AddressToRoute",
		MapMetadataFunc: func(addr *Address) *Route {
			return typed.NewDefault[RouteSpec, RouteDef](addr.Metadata().ID(), RouteSpec{})
		},
		UnmapMetadataFunc: func(route *Route) *Address {
			return typed.NewDefault[AddressSpec, AddressDef](route.Metadata().ID(), AddressSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, addr *Address, route *Route) error {
			route.TypedSpec().MTU = addr.TypedSpec().MTU
			return nil
		},
	}, qtransform.WithInputFinalizers())

	for _, c := range []controller.QController{linkToAddress, addressToRoute} {
		if err := rt.RegisterQController(c); err != nil {
			panic(err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	routePtr := resource.NewPointer("network", "Routes.example.resgraph.dev", "eth0")

	if err := st.Create(ctx, typed.NewDefault[LinkSpec, LinkDef]("eth0", LinkSpec{MTU: 1500})); err != nil {
		panic(err)
	}
	route, err := safe.StateWatchFor[*Route](waitCtx, st, routePtr, state.WithEventTypes(state.Created, state.Updated))
	if err != nil {
		panic(err)
	}
	fmt.Println("route eth0 MTU:", route.TypedSpec().MTU)

	// Destroying the link destroys the whole chain.
	if err := st.Destroy(ctx, resource.NewPointer("network", "Links.example.resgraph.dev", "eth0")); err != nil {
		panic(err)
	}
	if _, err := st.WatchFor(waitCtx, routePtr, state.WithEventTypes(state.Destroyed)); err != nil {
		panic(err)
	}
	addrPtr := resource.NewPointer("network", "Addresses.example.resgraph.dev", "eth0")
	if _, err := st.WatchFor(waitCtx, addrPtr, state.WithEventTypes(state.Destroyed)); err != nil {
		panic(err)
	}
	fmt.Println("route and address eth0 destroyed")

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// route eth0 MTU: 1480
	// route and address eth0 destroyed
}
