package controllers

import (
	"context"
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// TestKernelLinkLeftTearingDownIsWrittenAnew: a KernelLink that a
// cleanup left tearing down (its link was gone; the destroy after the
// teardown failed) while its link came back is destroyed and written anew,
// not refused for ever (the simulator found it: TestSimulation).
func TestKernelLinkLeftTearingDownIsWrittenAnew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		left := netres.NewKernelLink("eth0")
		require.NoError(t, st.Create(t.Context(), left, state.WithCreateOwner(KernelLinkObserverName)))
		_, err := st.Teardown(t.Context(), left.Metadata(), state.WithTeardownOwner(KernelLinkObserverName))
		require.NoError(t, err)

		k := kernel.New(kernel.Config{})
		_, err = k.ApplyLink(context.Background(), "eth0", 1500)
		require.NoError(t, err)
		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.NewNop()),
			runtimetest.WithControllers(&KernelLinkObserver{Kernel: k}))
		runtimetest.AssertResource(t, st, "eth0", runtimetest.Holds(func(kl *netres.KernelLink) bool {
			return kl.Metadata().Phase() == resource.PhaseRunning && kl.TypedSpec().MTU == 1500
		}))
	})
}

// TestRouteLeftTearingDownIsWrittenAnew: the same for
// StaticRouteController's RouteSpecs.
func TestRouteLeftTearingDownIsWrittenAnew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		spec := netres.NewLinkSpec("eth1")
		spec.TypedSpec().Addresses = []netip.Prefix{netip.MustParsePrefix("192.168.50.10/24")}
		spec.TypedSpec().Routes = []netres.RouteIntent{{Destination: netip.MustParsePrefix("192.168.60.0/24"), Gateway: netip.MustParseAddr("192.168.50.1")}}
		runtimetest.Create(t, st, spec)
		addr := netres.NewAddressSpec(netres.AddressID("eth1", spec.TypedSpec().Addresses[0]))
		*addr.TypedSpec() = netres.AddressSpecSpec{Link: "eth1", Address: spec.TypedSpec().Addresses[0]}
		addr.Metadata().Finalizers().Add(AddressCleanupControllerName)
		require.NoError(t, st.Create(t.Context(), addr, state.WithCreateOwner(AddressControllerName)))
		id := netres.RouteID("eth1", spec.TypedSpec().Routes[0].Destination)
		left := netres.NewRouteSpec(id)
		require.NoError(t, st.Create(t.Context(), left, state.WithCreateOwner(StaticRouteControllerName)))
		_, err := st.Teardown(t.Context(), left.Metadata(), state.WithTeardownOwner(StaticRouteControllerName))
		require.NoError(t, err)

		runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.NewNop()),
			runtimetest.WithControllers(StaticRouteController{}))
		runtimetest.AssertResource(t, st, id, runtimetest.Holds(func(rs *netres.RouteSpec) bool {
			return rs.Metadata().Phase() == resource.PhaseRunning && rs.TypedSpec().Gateway == spec.TypedSpec().Routes[0].Gateway
		}))
	})
}
