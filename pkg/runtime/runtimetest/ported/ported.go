package ported

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// ResourceWithRD is the constraint of the helpers' resource types: a
// typed resource that knows its definition (typed.ResourceWithDefinition).
type ResourceWithRD = typed.ResourceWithDefinition

// Option configures one call.
type Option = runtimetest.WaitOption

// WithNamespace makes the call address resources in ns instead of the
// type's default namespace (runtimetest.InNamespace).
func WithNamespace(ns resource.Namespace) Option { return runtimetest.InNamespace(ns) }

// AssertResource is runtimetest.AssertResource, its timeout from ctx.
func AssertResource[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, id resource.ID, assertion func(R, *assert.Assertions), opts ...Option) R {
	t.Helper()
	return runtimetest.AssertResource(t, st, id, assertion, withDeadline(ctx, opts)...)
}

// AssertResources is runtimetest.AssertResources, its timeout from ctx.
func AssertResources[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, ids []resource.ID, assertion func(R, *assert.Assertions), opts ...Option) []R {
	t.Helper()
	return runtimetest.AssertResources(t, st, ids, assertion, withDeadline(ctx, opts)...)
}

// AssertNoResource is runtimetest.AssertNoResource, its timeout from ctx.
func AssertNoResource[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, id resource.ID, opts ...Option) {
	t.Helper()
	runtimetest.AssertNoResource[R](t, st, id, withDeadline(ctx, opts)...)
}

// Destroy is runtimetest.Destroy, its timeout from ctx.
func Destroy[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, ids []resource.ID, opts ...Option) {
	t.Helper()
	runtimetest.Destroy[R](t, st, ids, withDeadline(ctx, opts)...)
}

// Teardown is runtimetest.Teardown, its timeout from ctx.
func Teardown[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, ids []resource.ID, opts ...Option) {
	t.Helper()
	runtimetest.Teardown[R](t, st, ids, withDeadline(ctx, opts)...)
}

// DestroyAll is runtimetest.DestroyAll, its timeout from ctx: every
// resource of type R is destroyed.
func DestroyAll[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, opts ...Option) {
	t.Helper()
	runtimetest.DestroyAll[R](t, st, withDeadline(ctx, opts)...)
}

// ResourceIDs is runtimetest.ResourceIDs: the IDs of the resources of
// type R, sorted.
func ResourceIDs[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, opts ...Option) []resource.ID {
	t.Helper()
	return runtimetest.ResourceIDs[R](t, st, withDeadline(ctx, opts)...)
}

// ResourceIDsWithOwner is runtimetest.ResourceIDs with
// runtimetest.AsOwner: the IDs of the resources of type R that owner owns
// ("" for the resources without owner), sorted.
func ResourceIDsWithOwner[R ResourceWithRD](ctx context.Context, t testing.TB, st state.State, owner resource.Owner, opts ...Option) []resource.ID {
	t.Helper()
	return runtimetest.ResourceIDs[R](t, st, append(withDeadline(ctx, opts), runtimetest.AsOwner(owner))...)
}

// withDeadline adds ctx's deadline, when it has one, as the call's
// timeout (before opts, which may override it).
func withDeadline(ctx context.Context, opts []Option) []Option {
	deadline, ok := ctx.Deadline()
	if !ok {
		return opts
	}
	return append([]Option{runtimetest.Within(max(time.Until(deadline), 0))}, opts...)
}
