// Package runtimetest is the test kit for code built on resgraph: it runs
// a Runtime over a fresh in-memory state for the length of a test, waits
// for typed resources to reach a condition, and waits for the Runtime to
// settle.
//
//	func TestNumberGetsALabel(t *testing.T) {
//		e := runtimetest.Start(t, runtimetest.WithControllers(newNumberToLabel()))
//		runtimetest.Create(t, e.State, typed.NewDefault[NumberSpec, NumberDef]("one", NumberSpec{N: 1}))
//		label := runtimetest.Await(t, e.State, "one", func(l *Label) bool { return l.TypedSpec().Text == "number 1" })
//		...
//	}
//
// [Start] registers the controllers, runs the Runtime and stops it in
// t.Cleanup, then checks that no goroutine started since Start is left
// (goleak). Do not `defer goleak.VerifyNone(t)` in such a test: a deferred
// call runs before t.Cleanup, while the Runtime still runs, and reports its
// goroutines; the check of Start runs after the Runtime stopped.
// goleak.VerifyTestMain in TestMain goes well with it. A test that runs in
// parallel with others (t.Parallel) sees their goroutines too: give it
// [WithoutLeakCheck].
//
// Waiting never polls and never sleeps: [Await], [AwaitGone], [AwaitAll],
// [AwaitMetadata] (a condition on metadata: phase, finalizers, owner) and
// [AwaitState] watch the resources and check their condition on every
// change, until a deadline ([DefaultTimeout], or [SetTimeout]'s); [Settle]
// waits for the Runtime's own notifications until it is idle (no
// Controller busy, no QController item due or in flight, no watch behind
// the state; see [WaitIdle] for exactly what is guaranteed). A test that
// times out fails with the last state it saw: the resource and why it did
// not match, or what the Runtime is still doing (which controller, which
// queue items, which kind's watch).
//
// # Assertion-style tests
//
// Tests written with testify assertions inside a retry (the style of the
// established runtime's test suites) port as they are: [AssertResource]
// and [AssertResources] run a function of the resource and an
// *assert.Assertions on every state of the resources until it records no
// failure, and report what it recorded on the last state when the time is
// up; [AssertNoResource] waits for absence; [Destroy] tears resources down,
// waits for their finalizers and destroys them; [Teardown] only tears them
// down.
//
//	runtimetest.AssertResource(t, e.State, "hostname", func(r *Hostname, asrt *assert.Assertions) {
//		asrt.Equal("my-node", r.TypedSpec().Hostname)
//	}, runtimetest.Within(5*time.Second))
//	runtimetest.Destroy[*HostnameConfig](t, e.State, []resource.ID{"operator"})
//	runtimetest.AssertNoResource[*Hostname](t, e.State, "hostname")
//
// Their options set the timeout of one call ([Within]), a namespace other
// than the type's default ([InNamespace]) and the owner to act as
// ([AsOwner]); [SetTimeout] sets the timeout of every wait of one test,
// the bool-predicate ones included. The resource type is inferred from the
// condition or the assertion; a call with only IDs names it once
// (Await[*Label], Destroy[*HostnameConfig]), since Go cannot infer a type
// from an ID.
//
// # Deterministic time
//
// Everything works inside a testing/synctest bubble: start the Runtime in
// the bubble, and backoffs, requeue intervals and timeouts take no wall
// time (time advances when every goroutine of the bubble waits). Inside a
// bubble, Settle first waits until every goroutine of the bubble is blocked
// (synctest.Wait), which makes its check exact whatever the controllers do.
// Give the Runtime short backoffs with [WithRuntimeOptions] when a test
// waits for retries outside a bubble.
package runtimetest
