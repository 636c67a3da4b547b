package cleanup_test

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/generic/cleanup"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// A Link, and the Addresses that depend on it (labelled with its ID).
type (
	LinkSpec    struct{}
	LinkDef     struct{}
	Link        = typed.Resource[LinkSpec, LinkDef]
	AddressSpec struct{}
	AddressDef  struct{}
	Address     = typed.Resource[AddressSpec, AddressDef]
)

func (LinkDef) Definition() typed.Definition {
	return typed.Definition{Type: "Links.example.resgraph.dev", DefaultNamespace: "network"}
}

func (AddressDef) Definition() typed.Definition {
	return typed.Definition{Type: "Addresses.example.resgraph.dev", DefaultNamespace: "network"}
}

// A Link torn down waits for its Addresses to go: the cleanup controller
// holds it with its finalizer until no Address labelled with it is left.
func Example() {
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		panic(err)
	}
	err = rt.RegisterController(cleanup.NewController(cleanup.Settings[*Link, *Address]{
		Name: "LinkCleanup",
		DependentsQuery: func(link *Link) []resource.LabelQueryOption {
			return []resource.LabelQueryOption{resource.LabelEqual("link", link.Metadata().ID())}
		},
	}))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()

	link := typed.NewDefault[LinkSpec, LinkDef]("eth0", LinkSpec{})
	addr := typed.NewDefault[AddressSpec, AddressDef]("eth0/10.0.0.2", AddressSpec{})
	addr.Metadata().Labels().Set("link", "eth0")
	for _, r := range []resource.Resource{link, addr} {
		if err := st.Create(ctx, r); err != nil {
			panic(err)
		}
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	held, err := st.WatchFor(waitCtx, link.Metadata(), state.WithCondition(func(r resource.Resource) (bool, error) {
		return !r.Metadata().Finalizers().Empty(), nil
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println("eth0 finalizers:", *held.Metadata().Finalizers())

	ready, err := st.Teardown(ctx, link.Metadata())
	if err != nil {
		panic(err)
	}
	fmt.Println("eth0 torn down, ready to destroy:", ready)

	if err := st.Destroy(ctx, addr.Metadata()); err != nil {
		panic(err)
	}
	released, err := st.WatchFor(waitCtx, link.Metadata(), state.WithFinalizerEmpty())
	if err != nil {
		panic(err)
	}
	fmt.Println("its address gone, eth0 finalizers:", *released.Metadata().Finalizers())
	if err := st.Destroy(ctx, link.Metadata()); err != nil {
		panic(err)
	}

	cancel()
	if err := <-done; err != nil {
		panic(err)
	}
	// Output:
	// eth0 finalizers: [LinkCleanup]
	// eth0 torn down, ready to destroy: false
	// its address gone, eth0 finalizers: []
}
