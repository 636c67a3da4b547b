// Package ported is the test kit's door for tests ported from the
// established controller runtime: its assertion helpers with the call
// shapes that runtime's test users write — a context first, then the
// test, the state and the IDs — so that a ported test compiles with its
// imports changed only:
//
//	import rtestutils "github.com/resgraph/resgraph/pkg/runtime/runtimetest/ported"
//
//	rtestutils.AssertResources(ctx, t, st, []resource.ID{"eth0"}, func(r *LinkStatus, asrt *assert.Assertions) {
//		asrt.True(r.TypedSpec().Up)
//	})
//	rtestutils.DestroyAll[*LinkSpec](ctx, t, st)
//
// Every function is the package runtimetest function of the same name,
// and behaves as it does (retried on every change, the last failures
// reported, shared read-only snapshots); the context is where the call
// takes its timeout from: its deadline, when it has one, is the call's
// timeout (runtimetest.Within), else the test's (runtimetest.SetTimeout).
//
// Why a door of its own: runtimetest has one way to wait for a resource
// and one timeout knob, and Go has no overloading, so one function cannot
// take both its call shape and this one. Rather than a second signature
// beside every helper in runtimetest (two ways to write every wait), the
// ported shape lives here, named for what it is for; new tests use
// runtimetest. The names follow the established runtime's documentation;
// options other than a namespace have no counterpart.
package ported
