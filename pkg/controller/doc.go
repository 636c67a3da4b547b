// Package controller is the controller contract of resgraph: what a
// [Controller] and a [QController] declare (inputs and outputs) and what the
// Runtime gives them at run time ([Runtime], [QRuntime]: scoped readers and
// writers, wake-ups, output tracking).
//
// A Controller reconciles all its inputs whenever any of them changes;
// wake-ups that arrive while it is busy coalesce into one (rule C2). A
// QController reconciles one resource pointer at a time from a queue, up to
// [QSettings.Concurrency] pointers in parallel, with per-item exponential
// backoff (rules Q1–Q5).
//
// Access is scoped (rules C3–C5): a controller reads only its declared
// inputs and its own outputs, writes only its declared outputs, and every
// write carries its name as the owner. The Runtime (package runtime)
// enforces this; refused accesses return errors naming the controller, the
// operation and the resource, told apart by [IsAccessDeniedError] (Runtimes
// build them with [NewAccessDeniedError]). [Reader] and [Writer] document
// their error classes and are safe for concurrent use.
//
// Reads follow the state's rule S7: [Reader] Get and List return private
// copies, which the controller may change; with state.WithReadOnlyGet and
// state.WithReadOnlyList they return the shared, read-only snapshots, at
// no copy cost, which the controller must never change (not even a slice
// or map of the spec). To change a resource, let Modify hand you a private
// copy:
//
//	err := r.Modify(ctx, out, func(res resource.Resource) error {
//		res.(*Status).TypedSpec().Up = true
//		return nil
//	})
//
// or DeepCopy what you read and Update the copy. The copy Modify hands
// fn is fn's while it runs: the Runtime may store it as is once fn
// returned, so fn keeps no reference to it (the inmem state's mutation
// detector reports a later change of it).
//
// A QController's MapInput receives the changed pointer of a mapped input.
// When the input was destroyed, that pointer is a [*DestroyedInput] with
// the input's last stored version (labels, annotations, owner, phase,
// finalizers, version, spec), so that a MapInput that maps by a label maps
// the destruction like the changes before it (rule Q4); [AsDestroyed]
// tells it apart:
//
//	if gone, ok := controller.AsDestroyed(ptr); ok {
//		parent, _ := gone.Metadata().Labels().Get("parent")
//		...
//	}
//
// When the input's metadata changed since its last MapInput (a relabel, a
// new owner, a teardown), the pointer carries its previous version too
// (rule Q4, extended): a [*ChangedInput], or a DestroyedInput with
// [DestroyedInput.Previous]; [PreviousOf] returns it from either, so that
// MapInput requeues what the input left as well as what it joined.
//
// The rules cited here are stated in docs/controllers-and-runtime.md in the repository.
package controller
