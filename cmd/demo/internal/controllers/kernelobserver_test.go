package controllers

import (
	"context"
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
		spec, _, id := eth1WithARoute(t, st, AddressCleanupControllerName)
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
