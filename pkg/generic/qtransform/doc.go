// Package qtransform provides a generic QController with the contract of
// package transform, reconciling one input at a time: every resource of an
// input type I maps to one resource of an output type O.
//
// Reconcile(ptr) reads the input. A running input (or a tearing-down one,
// with [WithIgnoreTearingDownInputs]) gets its output written with Modify
// (a new output may be written with Create):
// [Settings.MapMetadataFunc] names it and [Settings.TransformFunc] fills it,
// on a copy of the stored output, and an unchanged output is not written
// (no version bump, no event).
//
// # Read-only inputs (rule S7)
//
// Reconcile reads its input read-only: the input handed to TransformFunc,
// TransformExtraOutputFunc, FinalizerRemovalFunc and MapMetadataFunc, the
// output handed to UnmapMetadataFunc, and the resources handed to the
// mappers of [WithExtraMappedInput] are the state's shared snapshots: a
// user function never changes them (the state's mutation detector, on in
// tests, reports a change). The output handed to TransformFunc is the
// controller's private copy, to fill. To change a resource you read, use
// Modify (its function gets a private copy) or DeepCopy it and Update the
// copy.
//
// # Input finalizers (the default)
//
// The controller puts a finalizer, named after itself, on every input it
// maps to an output, before the output is first written (rule C5 allows it
// on a QController's primary input). When the input tears down, its output
// is torn down and destroyed first; then [Settings.FinalizerRemovalFunc]
// (if set) may veto the removal, an error that fails the item and is
// retried with the Runtime's per-item backoff; then the finalizer goes. An
// input therefore never goes before its output: in a chain of
// qtransforms, tearing down the first input takes the chain down from its
// end. Adding the finalizer changes the input; the controller records
// that version as processed and tells the Runtime so
// ([QController.ProcessedInputs]), which then does not queue that change
// again (rule Q1, extended). [WithoutInputFinalizers] turns this off: nothing then holds the
// input, its output is torn down when it tears down and destroyed when it
// can be, possibly after the input is gone, and FinalizerRemovalFunc is
// ignored. [WithInputFinalizers] says the default explicitly; giving both
// is refused (rule G2).
//
// The options are spelled as in transform, whose default is the other way
// round (no input finalizers). The reason: a QController reconciles one
// pointer at a time and has no pass over all of its outputs that would
// find the output of a vanished input; holding the input lets it tear the
// output down while the input, and the metadata MapMetadataFunc needs,
// still exist. A transform Controller lists everything on every pass and
// cleans up after a vanished input without holding it. Both defaults are
// fixed by the API contract.
//
// An output with finalizers (of downstream controllers) is left tearing
// down and destroyed once its finalizers are gone: the output type is
// declared as an InputQMappedDestroyReady input, which maps such an output
// back to its input, and the input is reconciled again. The same path
// finishes the case of an input created again while its previous output is
// still tearing down: the old output is destroyed once it has no
// finalizers, and a fresh one is written.
//
// # Teardown gates and outcome signals (rule G1, extended)
//
// G1a. With [WithIgnoreTeardownUntil](f...), a tearing-down input that
// holds a finalizer other than f... and the controller's own is
// reconciled as a running one: TransformFunc fills its output (it sees
// the input tearing down), the output is written, and the controller's
// finalizer stays. Once it holds only those, its teardown proceeds as
// usual (output torn down and destroyed, FinalizerRemovalFunc, finalizer
// removed). The removal of the last other finalizer changes the input,
// which queues it: no extra input is needed.
//
// G1b. With [WithIgnoreTeardownWhile](f...), the same holds while the
// input holds one of f...; both options together hold while either does.
//
// G1c. A TransformFunc that returns generic.ErrSkip (or an error wrapping
// it) writes nothing: a missing output is not created, an existing one is
// left as it is, TransformExtraOutputFunc does not run. The item
// succeeds: no retry, no failure log, and the input is processed again
// only when it (or a mapped input that maps to it) changes. The input
// finalizer is added before TransformFunc runs, so a skipped input holds
// it too.
//
// G1d. A TransformFunc that returns generic.ErrDestroyOutput has the
// input's output torn down and destroyed as if the input were gone (an
// output with finalizers stays tearing down until they go, and its
// output becoming destroy-ready queues the input again); nothing is written, the
// item succeeds, nothing is logged. A running input keeps the finalizer;
// its next change that TransformFunc fills writes a new output.
//
// G1e. Only TransformFunc may return a signal. A signal returned by
// TransformExtraOutputFunc, FinalizerRemovalFunc or
// FinalizerRemovalExtraOutputFunc fails the item with an invalid-class
// error naming the controller, the function and the fix. A gate that
// names no finalizer (or an empty one), a gate with
// [WithIgnoreTearingDownInputs], and [WithIgnoreTeardownWhile] naming
// the controller's own finalizer are refused at registration (rule G2).
//
// G1f. With [Settings.MapMetadataOptionalFunc] instead of MapMetadataFunc,
// an input mapped to None has no output: none is written, an existing one
// is torn down and destroyed (as if the input were gone), and the
// controller's finalizer is released, FinalizerRemovalFunc agreeing (no
// output needs it); an input that maps to an output again gets its
// finalizer and its output back.
//
// # Finding outputs and inputs
//
// The controller remembers, for every input, the output it wrote (and for
// every output its input), so that it can find the output of an input that
// is gone without calling MapMetadataFunc on it, and the input of a
// destroy-ready output. A QController value therefore serves one Runtime:
// build a new one for every Runtime. Two inputs must never map to the same
// output.
//
// [Settings.UnmapMetadataFunc], the reverse of MapMetadataFunc
// (UnmapMetadataFunc(MapMetadataFunc(in)) must name in), covers what this
// memory cannot: the outputs written before the Runtime started. When it is
// set, the first Reconcile call loads the index from the controller's
// existing outputs and destroys the outputs whose input no longer exists;
// an output that UnmapMetadataFunc cannot map (an error, a panic, a wrong
// kind) is logged and left alone, and fails no input. It is required with
// [WithoutInputFinalizers], where an input may go away, while no Runtime
// runs, and leave its output behind. With input finalizers it is optional:
// an input cannot go before its output, every existing input is reconciled
// at start and claims its output, a tearing-down input finds its output by
// MapMetadataFunc, and a destroy-ready output of the controller's that no
// input claims is destroyed. Without it, what stays is only an output that
// no input maps to any more and that no input destroyed: one whose input's
// finalizer someone else removed, or one that an input stopped mapping to
// while no Runtime ran (a change of MapMetadataFunc); set
// UnmapMetadataFunc to have those cleaned up at start.
//
// Extra inputs go through mapper functions ([WithExtraMappedInput]): a
// change to one queues the primary inputs its mapper returns. A destroyed
// extra input reaches its mapper as its last stored version (labels
// included; rule Q4), with [InputDestroyed] true on the mapper's context,
// so that a mapper that maps by a label maps the destruction to the same
// inputs as the changes before it. (A destroy-ready output already gone
// when its mapping runs maps to nothing: its destruction is done.)
// Reconcile failures are retried with per-item backoff by the Runtime; a
// controller.RequeueError returned by a user function requeues the item
// after its interval. A panic in a user function is recovered and fails
// that item only, as a *generic.PanicError.
//
// # Misconfiguration (rule G2)
//
// [NewQController] cannot fail; [QController.Validate]
// (controller.Validator) reports a configuration that cannot work, and the
// Runtime calls it at registration: RegisterQController refuses the
// controller with an error of the invalid class (state.IsInvalidError)
// that names the controller and the setting, so that a static
// misconfiguration never reaches Reconcile and never becomes a retry loop.
// Refused are: an empty Name; an input or output type whose definition
// panics or has an empty type or namespace, or whose spec cannot be
// deep-copied (a func, a channel, a sync primitive); the same input and
// output type; both [WithInputFinalizers] and [WithoutInputFinalizers]; a
// neither or both of MapMetadataFunc and MapMetadataOptionalFunc; a nil
// UnmapMetadataFunc with
// [WithoutInputFinalizers]; a nil TransformFunc;
// [WithOutputKind] with a kind other than controller.OutputExclusive or
// controller.OutputShared; [WithExtraOutputs] with an empty type, the
// output type, an unknown output kind, or a type given twice;
// [WithConcurrency](0); both FinalizerRemovalFunc and
// FinalizerRemovalExtraOutputFunc; the teardown gates of G1e;
// [WithExtraMappedInput] with a nil mapper, a type
// whose definition is invalid or whose spec cannot be deep-copied, the
// output type, or a type given twice.
// (Reconcile and MapInput of a controller registered without Validate fail
// at once with the same error.)
//
// A setting that the chosen mode does not use is not an error: it is
// ignored. [Settings.FinalizerRemovalFunc] and
// FinalizerRemovalExtraOutputFunc are ignored with [WithoutInputFinalizers]. Nil options are skipped.
//
// The rules cited here are stated in docs/generic-controllers.md in the repository.
package qtransform
