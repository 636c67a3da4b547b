// Package conformance holds reusable test suites that check an
// implementation against the resgraph contract, using only public packages:
//
//   - [StateSuite] checks a [state.State] against rules R3 and S1–S15.
//   - RuntimeSuite checks a Runtime against the controller rules.
//   - [CrossBackendSuite] checks what holds across the namespaces of a
//     State that live in different backends (rule P1: a routed state).
//
// Both have TestHostile_* tests, a table of hostile inputs that any
// implementation must survive: typed-nil errors and resources, nil
// arguments and nil options, resources whose Metadata or DeepCopy
// misbehave, errors whose Error panics, panics with values that cannot be
// printed, registrations whose declarations panic, and (for a Runtime, with
// RuntimeSuite.NewEngineOver) a State whose watches close their stream,
// fail or send unusable events. A bad argument is refused with an
// invalid-class error; user code misbehaving fails only the call, item or
// controller that ran it; nothing else is written, nothing crashes, no lock
// is left held.
//
// The example resource types the suites use ([IntResource], [StrResource])
// are exported so that other suites and users' tests can share them.
//
// A suite is a testify suite; run it from a test of the implementation:
//
//	func TestStateConformance(t *testing.T) {
//		suite.Run(t, &conformance.StateSuite{NewState: func() state.State { return inmem.NewState() }})
//	}
//
// The rules cited here are stated in docs/resources-and-state.md and docs/controllers-and-runtime.md in the repository.
package conformance
