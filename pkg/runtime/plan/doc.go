// Package plan answers "what will this change do?" before it is made, as
// `terraform plan` and a server-side dry run do for their worlds: it runs
// a daemon's own controllers, over a copy of its live state and fakes of
// its world, to their fixed point with the change applied, and tells what
// would change — each resource created, updated (field by field) or
// destroyed, the controller that would write it and the causal chain from
// the change, the world actions the daemon would take — or that the
// daemon would not converge, and the loop it would keep going round.
//
//	p, err := plan.Make(ctx, live, plan.Daemon{Options: opts, Setup: setup}, change)
//	...
//	p.WriteText(os.Stdout)
//
// A [Change] is what an outside writer would do: resources to set, and
// resources to remove ([ParseChange] reads one from a YAML or JSON file).
// A [Daemon] is the daemon's Runtime options and a Setup that builds
// fakes of its world in the condition the live state describes (a fake
// kernel with the links the state lists) and registers the daemon's
// controllers over them.
//
// The plan's Runtime is the real one, in real time, over an in-memory
// state of its own: no fault is injected, and the daemon's retry
// backoffs are shortened to milliseconds (what a retry leads to is
// planned, not when). It runs in any binary — a daemon's own CLI, a test
// — where the simulator's deterministic runs (package runtimetest/sim)
// exist only in test binaries.
//
// # Rules
//
//   - PL1. A plan never writes to the live state: it lists the daemon's
//     kinds of it once, and every write goes to its own copy. The world
//     is the daemon's fakes.
//   - PL2. A change that names a kind the daemon does not know (no
//     controller reads or writes it), or sets or removes a resource of a
//     type one of its controllers writes, or removes a resource the live
//     state does not hold (and the change does not set), is refused
//     before anything runs with a [*RefusedError] (of the invalid class)
//     giving the reason for each such resource.
//   - PL3. A plan says whether the daemon converged: after the change, it
//     is at its fixed point when its Runtime is idle with no retry or
//     requeue due and stays so (committing nothing) for a quiet period,
//     and its world is quiet: every notification the world's fakes sent
//     their observers was handled ([System] Quiet), however late an
//     observer wakes;
//     it did not converge when the Runtime flags a hot loop (Why names
//     its cycle), when the daemon makes more commits than the bound, or
//     when the time is up — and then Loop lists its last commits. A
//     removed resource whose finalizers the daemon never lets go of is
//     said, too.
//   - PL4. A plan's changes are the difference between the daemon's fixed
//     point before the change and after it, versions and times aside: a
//     resource created, destroyed, or updated in its phase, owner,
//     finalizers, labels, annotations or spec (each spec field by its
//     JSON path). Drift lists what the daemon changes from the live state
//     before the change (nothing, for a daemon at its fixed point). A
//     sensitive type's spec values are never printed: the types
//     WithSensitive names and, for a change read by [ParseChange], those
//     its registry's definitions mark sensitive.
//   - PL5. Each change names the controllers that wrote it (a
//     Controller's CleanupOutputs teardowns and destroys are its writes;
//     its owner when the trace lost its writes) and its causal
//     chain, the same on every run of the same plan that makes the same
//     writes, whatever its passes coalesced: the change is applied one
//     resource at a time, the daemon settling after each, and a write
//     follows from the resource of its stretch of the trace. A
//     link of the chain is a resource and its first write in that
//     stretch; its cause is, for a QController's write in a reconcile,
//     the change its reconcile was for (the reconcile of the worker that
//     made it: the trace names the worker of each reconcile and write of
//     a QController of several workers, or of one and a RunHook), and for
//     a Controller's, or a write of a QController's RunHook (it names no
//     worker, and so none of its reconciles is open for it in the trace,
//     even while one runs), a change of the stretch of a kind the controller
//     reads (a pass may coalesce several, a hook reads what it will, and
//     which of them the trace names depends on timing). A write of an
//     observer of the world ([System] Observers: a controller woken by
//     the world, not by the state) that no change of its stretch
//     explains follows the world actions of the stretch (all of them, in
//     the order of their text), taken by the actor (System Actors) the
//     proposed resource reached first — fewest links, ties to the first
//     by name: its chain is the actor's cause, then the actor and the
//     actions ("LinkApplyController kernel: set the MTU of wlan0 to
//     1400"), then the observer's write; what the observer's write
//     causes follows from it as from any change. A traced write that neither
//     the change nor a world action explains says so in the text
//     ("because: nothing the plan saw: …") rather than giving no cause,
//     and so does a change the trace has no write of ("because: the
//     plan's trace has no write of it …").
//     The chain is the shortest from the proposed resource, ties going to
//     the cause of the written resource's ID ("eth1"'s LinkSpec for
//     eth1's LinkStatus), then to the first in kind and ID order. The
//     drift's changes name their writers too, and their chains from the
//     live state the same way: the stretch is the daemon settling before
//     the change, its roots every resource of the live state
//     ("LinkSpecs(config/eth0) (in the live state) → …"); a write
//     nothing of it explains follows from the daemon's start ("because:
//     the daemon's start: …"). The world actions are listed the
//     same way on every run too: those each proposed resource led to, in
//     the order the change's resources were applied, and within one in
//     the order of their text (controllers acting at once take theirs in
//     either order, and the world's log does not say whose each is).
package plan
