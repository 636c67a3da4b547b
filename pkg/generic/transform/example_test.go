package transform_test

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
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

// A chain of two transforms: every Link gets an Address with the Link's
// MTU minus 20, and every Address a Route with the same MTU.
func Example() {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		panic(err)
	}

	linkToAddress := transform.NewController(transform.Settings[*Link, *Address]{
		Name: "LinkToAddress",
		MapMetadataFunc: func(link *Link) *Address {
			return typed.NewDefault[AddressSpec, AddressDef](link.Metadata().ID(), AddressSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, link *Link, addr *Address) error {
			addr.TypedSpec().MTU = link.TypedSpec().MTU - 20
			return nil
		},
	})
	addressToRoute := transform.NewController(transform.Settings[*Address, *Route]{
		Name: "AddressToRoute",
		MapMetadataFunc: func(addr *Address) *Route {
			return typed.NewDefault[RouteSpec, RouteDef](addr.Metadata().ID(), RouteSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, addr *Address, route *Route) error {
			route.TypedSpec().MTU = addr.TypedSpec().MTU
			return nil
		},
	}, transform.WithInputFinalizers())

	for _, c := range []controller.Controller{linkToAddress, addressToRoute} {
		if err := rt.RegisterController(c); err != nil {
			panic(err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	if err := st.Create(ctx, typed.NewDefault[LinkSpec, LinkDef]("eth0", LinkSpec{MTU: 1500})); err != nil {
		panic(err)
	}

	// Wait for the end of the chain.
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	route, err := safe.StateWatchFor[*Route](waitCtx, st, resource.NewPointer("network", "Routes.example.resgraph.dev", "eth0"),
		state.WithEventTypes(state.Created, state.Updated))
	if err != nil {
		panic(err)
	}
	fmt.Println("route eth0 MTU:", route.TypedSpec().MTU, "owner:", route.Metadata().Owner())

	addr, err := safe.StateGet[*Address](ctx, st, resource.NewPointer("network", "Addresses.example.resgraph.dev", "eth0"))
	if err != nil {
		panic(err)
	}
	fmt.Println("address eth0 finalizers:", *addr.Metadata().Finalizers())

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// route eth0 MTU: 1480 owner: AddressToRoute
	// address eth0 finalizers: [AddressToRoute]
}
