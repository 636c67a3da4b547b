package destroy_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/generic/destroy"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestController_DestroysTornDownResourcesItDoesNotOwn: the destroy
// Controller destroys the resources of its type that are tearing down
// with no finalizers, whoever owns them (a user, another writer), once
// their finalizers are gone; it leaves running resources alone, and with
// WithOwners only destroys those of the owners given.
func TestController_DestroysTornDownResourcesItDoesNotOwn(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	byOther := fixture.New[fixture.CDef]("other", 0)
	require.NoError(t, st.Create(ctx, byOther, state.WithCreateOwner("someone-else")))
	held := fixture.New[fixture.CDef]("held", 0)
	held.Metadata().Finalizers().Add("hold")
	runtimetest.Create(t, st, fixture.New[fixture.CDef]("user", 0), fixture.New[fixture.CDef]("running", 0), held)
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(destroy.NewController[*fixture.C]()))

	for _, id := range []string{"other", "user", "held"} {
		_, err := st.Teardown(ctx, ptrC(id), state.WithTeardownOwner(ownerOf(t, st, id)))
		require.NoError(t, err)
	}
	runtimetest.AssertNoResource[*fixture.C](t, st, "other")
	runtimetest.AssertNoResource[*fixture.C](t, st, "user")
	runtimetest.AssertResource(t, st, "held", fixture.Meta[*fixture.C](func(md *resource.Metadata) bool { return md.Phase() == resource.PhaseTearingDown }))
	require.NoError(t, st.RemoveFinalizer(ctx, ptrC("held"), "hold"))
	runtimetest.AssertNoResource[*fixture.C](t, st, "held")
	runtimetest.AssertResource(t, st, "running", func(c *fixture.C, asrt *assert.Assertions) {
		asrt.Equal(resource.PhaseRunning, c.Metadata().Phase())
	})
}

// TestController_WithOwners: only the owners given are destroyed for.
func TestController_WithOwners(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	require.NoError(t, st.Create(ctx, fixture.New[fixture.CDef]("mine", 0), state.WithCreateOwner("a")))
	require.NoError(t, st.Create(ctx, fixture.New[fixture.CDef]("theirs", 0), state.WithCreateOwner("b")))
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(destroy.NewController[*fixture.C](destroy.WithOwners("a"))))
	for id, owner := range map[string]string{"mine": "a", "theirs": "b"} {
		_, err := st.Teardown(ctx, ptrC(id), state.WithTeardownOwner(owner))
		require.NoError(t, err)
	}
	runtimetest.AssertNoResource[*fixture.C](t, st, "mine")
	runtimetest.Settle(t, e.Runtime)
	runtimetest.AssertResource(t, st, "theirs", func(c *fixture.C, asrt *assert.Assertions) {
		asrt.Equal(resource.PhaseTearingDown, c.Metadata().Phase())
	})
}

// TestG2_DestroyControllerMisconfiguration: refused at registration.
func TestG2_DestroyControllerMisconfiguration(t *testing.T) {
	fixture.AssertRefused(t, destroy.NewController[*fixture.C](destroy.WithConcurrency(0), destroy.WithName("x")), "x", "WithConcurrency(0)")
	fixture.AssertRefused(t, destroy.NewController[*fixture.Uncopyable](destroy.WithName("y")), "y", "resource type")
}

func ownerOf(t *testing.T, st state.State, id string) string {
	t.Helper()
	r, err := st.Get(context.Background(), ptrC(id))
	require.NoError(t, err)
	return r.Metadata().Owner()
}
