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
func Teardown[R typed.ResourceWithDefinition](tb testing.TB, st state.State, ids []resource.ID, opts ...WaitOption) {
	tb.Helper()
	b := beginBatch[R](tb, opts)
	defer b.cancel()
	b.teardown(tb, st, ids, "teardown %s", false)
}

// Destroy tears down the resources of type R with the given IDs, waits
// until each has no finalizers left, and destroys it, as a user deleting
// them would; it fails the test on the first error, or when the time is
// up with the finalizers that were left. Resources are in R's default
// namespace unless [InNamespace] says otherwise; [AsOwner] acts as their
// owner. A resource that is already gone counts as destroyed.
func Destroy[R typed.ResourceWithDefinition](tb testing.TB, st state.State, ids []resource.ID, opts ...WaitOption) {
	tb.Helper()
	b := beginBatch[R](tb, opts)
	defer b.cancel()
	if !b.teardown(tb, st, ids, "destroy %s: teardown", true) {
		return
	}
	for _, id := range ids {
		ptr := b.pointer(id)
		if err := st.TeardownAndDestroy(b.ctx, ptr, state.WithTeardownAndDestroyOwner(b.c.ownerOf())); err != nil && !state.IsNotFoundError(err) {
			last := "gone"
			if r, gerr := st.Get(context.Background(), ptr); gerr == nil {
				last = r.Metadata().String()
			}
			tb.Fatalf("runtimetest: destroy %s: %v; last seen: %s%s", resource.PointerString(ptr), err, last, failingText(tb))
			return
		}
	}
}

// DestroyAll destroys every resource of type R (in R's default namespace,
// or [InNamespace]'s; with [AsOwner], those owner owns, acting as owner),
// as [Destroy] does each, and fails the test as Destroy does.
func DestroyAll[R typed.ResourceWithDefinition](tb testing.TB, st state.State, opts ...WaitOption) {
	tb.Helper()
	Destroy[R](tb, st, ResourceIDs[R](tb, st, opts...), opts...)
}

// ResourceIDs returns the IDs of the resources of type R (in R's default
// namespace, or [InNamespace]'s), sorted; with [AsOwner], only those owner
// owns. It fails the test when the state cannot list them.
func ResourceIDs[R typed.ResourceWithDefinition](tb testing.TB, st state.State, opts ...WaitOption) []resource.ID {
	tb.Helper()
	kind, c := kindOptions[R](tb, opts)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	l, err := st.List(ctx, kind, state.WithReadOnlyList())
	if err != nil {
		tb.Fatalf("runtimetest: list %s: %v", resource.KindString(kind), err)
		return nil
	}
	ids := make([]resource.ID, 0, len(l.Items))
	for _, r := range l.Items {
		if md := r.Metadata(); c.owner == nil || md.Owner() == *c.owner {
			ids = append(ids, md.ID())
		}
	}
	return ids
}

// batch is one call of Teardown or Destroy: the type's resources, the
// call's options and its deadline.
type batch struct {
	typ    resource.Type
	c      waitConfig
	ctx    context.Context
	cancel context.CancelFunc
}

func beginBatch[R typed.ResourceWithDefinition](tb testing.TB, opts []WaitOption) batch {
	kind, c := kindOptions[R](tb, opts)
	b := batch{typ: kind.Type(), c: c}
	b.ctx, b.cancel = context.WithTimeout(waitContext(tb), b.c.timeout)
	return b
}

func (b batch) pointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(b.c.namespace, b.typ, id)
}

// teardown tears down each resource, failing the test on the first error
// (what names the call, with the resource's pointer for its %s) but a
// resource that does not exist when gone is fine; it reports whether
// every teardown succeeded.
func (b batch) teardown(tb testing.TB, st state.State, ids []resource.ID, what string, goneIsFine bool) bool {
	tb.Helper()
	for _, id := range ids {
		ptr := b.pointer(id)
		if _, err := st.Teardown(b.ctx, ptr, state.WithTeardownOwner(b.c.ownerOf())); err != nil {
			if goneIsFine && state.IsNotFoundError(err) {
				continue
			}
			tb.Fatalf("runtimetest: "+what+": %v", resource.PointerString(ptr), err)
			return false
		}
	}
	return true
}
