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
// MTU minus 20, and every Address a Route with the same MTU. Each
// controller holds a finalizer on its inputs (the default), so tearing the
// Link down takes the chain down from the end: the Route is destroyed
// before the Address lets go, and the Address before the Link does.
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
	})

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

	// Destroying the link destroys the whole chain first: once
	// TeardownAndDestroy returns, the route and the address are gone.
	if err := st.TeardownAndDestroy(waitCtx, resource.NewPointer("network", "Links.example.resgraph.dev", "eth0")); err != nil {
		panic(err)
	}
	addrPtr := resource.NewPointer("network", "Addresses.example.resgraph.dev", "eth0")
	for _, ptr := range []resource.Pointer{routePtr, addrPtr} {
		if _, err := st.Get(ctx, ptr); !state.IsNotFoundError(err) {
			panic(fmt.Sprintf("%s still exists (%v)", resource.PointerString(ptr), err))
		}
	}
	fmt.Println("route and address eth0 destroyed before the link")

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// route eth0 MTU: 1480
	// route and address eth0 destroyed before the link
}
