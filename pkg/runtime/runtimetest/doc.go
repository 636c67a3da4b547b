// Package runtimetest is the test kit for code built on resgraph: it runs
// a Runtime over a fresh in-memory state for the length of a test, waits
// for resources to pass an assertion, and waits for the Runtime to settle.
//
//	func TestNumberGetsALabel(t *testing.T) {
//		e := runtimetest.Start(t, runtimetest.WithControllers(newNumberToLabel()))
//		runtimetest.Create(t, e.State, typed.NewDefault[NumberSpec, NumberDef]("one", NumberSpec{N: 1}))
//		label := runtimetest.AssertResource(t, e.State, "one", func(l *Label, asrt *assert.Assertions) {
//			asrt.Equal("number 1", l.TypedSpec().Text)
//		})
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
// # One way to wait for resources
//
// Start's state is [NewState]'s: its mutation detector (rule S7) reports
// a shared snapshot changed in place by failing the test with the report
// (naming the controller it was handed to) and stopping the test at its
// next wait, never by ending the test binary.
//
// A wait that times out fails the test with what it saw last and with the
// controllers of the test's Runtimes (those [Start] runs for the test or
// for a test it is a subtest of) that are failing: each with its state,
// its last error and its parked items.
//
// [AssertResource] (one ID), [AssertResources] (several, passing at the
// same time), [AssertNoResource] (absence), [AssertAll] (the list of a
// kind) and [AssertState] (anything, after every change of some kinds) run
// an assertion — a function given a testify *assert.Assertions, as a test
// body is — on every state the resources go through, until it records no
// failure; when the time is up the test fails with what it recorded on the
// last state, and that state. A bool predicate is a form of it:
// [Holds](pred) is the assertion that pred holds, and a nil assertion only
// asks the resource to exist. They watch; they never poll and never sleep.
//
//	runtimetest.AssertResource(t, e.State, "hostname", func(r *Hostname, asrt *assert.Assertions) {
//		asrt.Equal("my-node", r.TypedSpec().Hostname)
//	})
//	runtimetest.AssertResource(t, e.State, "a1", runtimetest.Holds(func(a *A) bool { return a.Metadata().Finalizers().Empty() }))
//	runtimetest.Destroy[*HostnameConfig](t, e.State, []resource.ID{"operator"})
//	runtimetest.AssertNoResource[*Hostname](t, e.State, "hostname")
//
// [Destroy] tears resources down, waits for their finalizers and destroys
// them, [DestroyAll] does it to every resource of a type, [Teardown] only
// tears them down, and [ResourceIDs] lists a type's IDs (those an owner
// owns, with [AsOwner]). The resource type is inferred from the assertion;
// a call with only IDs names it once (AssertNoResource[*Hostname]), since
// Go cannot infer a type from an ID. Options: [InNamespace] (a namespace
// other than the type's default), [AsOwner], [Within].
//
// # One way to wait for quiet
//
// [Settle] waits until the Runtime is idle: no Controller busy, no
// QController item due or in flight, no kind watch behind the state; see
// Settle for exactly what is guaranteed, and [Except] for a test that holds
// some controllers on purpose. A test that times out fails with what the
// Runtime is still doing (which controller, which queue items, which
// kind's watch). [RealTimeWaitIdle] is the same check returning an error,
// for the conformance suite's real-time mode (conformance.RealTime).
//
// # One timeout knob
//
// Every wait of the kit waits for the test's timeout: [DefaultTimeout]
// unless [SetTimeout] set another for the test; [Within] overrides it for
// one call. In a synctest bubble the timeout is virtual time.
//
// # Tests ported from the established runtime
//
// Its test users call the assertion helpers with a context first; the
// package runtimetest/ported has those call shapes (and DestroyAll and
// owner-filtered ID lists under their names there), so that a ported test
// compiles with its imports changed only. It is a door of its own rather
// than a second signature beside every helper here: see its package doc.
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
