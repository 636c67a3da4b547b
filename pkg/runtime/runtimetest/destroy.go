package runtimetest

import (
	"context"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// Teardown moves the resources of type R with the given IDs to the
// tearing-down phase (controllers with finalizers on them start letting
// them go), and fails the test on the first error (a resource that does
// not exist, an owner conflict). It does not wait. Resources are in R's
// default namespace unless [InNamespace] says otherwise; [AsOwner] acts
// as their owner.
func Teardown[R typed.ResourceWithDefinition](tb testing.TB, st state.State, ids []resource.ID, opts ...AwaitOption) {
	tb.Helper()
	def := (*new(R)).Definition()
	c := awaitOptions(tb, def.DefaultNamespace, opts)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, id := range ids {
		ptr := resource.NewPointer(c.namespace, def.Type, id)
		if _, err := st.Teardown(ctx, ptr, state.WithTeardownOwner(c.owner)); err != nil {
			tb.Fatalf("runtimetest: teardown %s: %v", resource.PointerString(ptr), err)
			return
		}
	}
}

// Destroy tears down the resources of type R with the given IDs, waits
// until each has no finalizers left, and destroys it, as a user deleting
// them would; it fails the test on the first error, or when the time is
// up with the finalizers that were left. Resources are in R's default
// namespace unless [InNamespace] says otherwise; [AsOwner] acts as their
// owner. A resource that is already gone counts as destroyed.
func Destroy[R typed.ResourceWithDefinition](tb testing.TB, st state.State, ids []resource.ID, opts ...AwaitOption) {
	tb.Helper()
	def := (*new(R)).Definition()
	c := awaitOptions(tb, def.DefaultNamespace, opts)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	for _, id := range ids {
		ptr := resource.NewPointer(c.namespace, def.Type, id)
		if _, err := st.Teardown(ctx, ptr, state.WithTeardownOwner(c.owner)); err != nil {
			if state.IsNotFoundError(err) {
				continue
			}
			tb.Fatalf("runtimetest: destroy %s: teardown: %v", resource.PointerString(ptr), err)
			return
		}
	}
	for _, id := range ids {
		ptr := resource.NewPointer(c.namespace, def.Type, id)
		if err := st.TeardownAndDestroy(ctx, ptr, state.WithTeardownAndDestroyOwner(c.owner)); err != nil && !state.IsNotFoundError(err) {
			last := "gone"
			if r, gerr := st.Get(context.Background(), ptr); gerr == nil {
				last = r.Metadata().String()
			}
			tb.Fatalf("runtimetest: destroy %s: %v; last seen: %s", resource.PointerString(ptr), err, last)
			return
		}
	}
}
