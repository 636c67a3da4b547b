// Package qtransform provides a generic QController with the contract of
// package transform, reconciling one input at a time: every resource of an
// input type I maps to one resource of an output type O.
//
// Reconcile(ptr) reads the input. A running input (or a tearing-down one,
// with [WithIgnoreTearingDownInputs]) gets its output written with Modify
// (a new output may be written with Create):
// [Settings.MapMetadataFunc] names it and [Settings.TransformFunc] fills it,
// on a copy of the stored output, and an unchanged output is not written
// (no version bump, no event). A tearing-down input has its output torn
// down and destroyed; with [WithInputFinalizers] its finalizer (named after
// the controller) is removed only after that, and after
// [Settings.FinalizerRemovalFunc] agrees. An absent input has its output
// torn down and destroyed.
//
// An output with finalizers is left tearing down and destroyed once its
// finalizers are gone: the output type is declared as an
// InputQMappedDestroyReady input, and [Settings.UnmapMetadataFunc] maps such
// an output back to its input, which is reconciled again. The same path
// finishes the case of an input created again while its previous output is
// still tearing down: the old output is destroyed once it has no
// finalizers, and a fresh one is written.
//
// The controller remembers, for every input, the output it wrote, so that
// it can find the output of an input that is gone without calling
// MapMetadataFunc on it. The first Reconcile call loads this index from
// the controller's existing outputs (with UnmapMetadataFunc) and destroys
// the outputs whose input no longer exists; an output that
// UnmapMetadataFunc cannot map (an error, a panic, a wrong kind) is logged
// and left alone, and fails no input. A QController value
// therefore serves one engine: build a new one for every engine.
// UnmapMetadataFunc(MapMetadataFunc(in)) must name in, and two inputs must
// never map to the same output.
//
// Extra inputs go through mapper functions ([WithExtraMappedInput]): a
// change to one queues the primary inputs its mapper returns. Reconcile
// failures are retried with per-item backoff by the engine; a
// controller.RequeueError returned by a user function requeues the item
// after its interval. A panic in a user function is recovered and fails
// that item only, as a *generic.PanicError.
//
// # Misconfiguration (rule G2)
//
// [NewQController] cannot fail; [QController.Validate]
// (controller.Validator) reports a configuration that cannot work, and the
// engine calls it at registration: RegisterQController refuses the
// controller with an error of the invalid class (state.IsInvalidError)
// that names the controller and the setting, so that a static
// misconfiguration never reaches Reconcile and never becomes a retry loop.
// Refused are: an empty Name; an input or output type whose definition
// panics or has an empty type or namespace; the same input and output
// type; a nil MapMetadataFunc or UnmapMetadataFunc; a nil TransformFunc;
// [WithOutputKind] with a kind other than controller.OutputExclusive or
// controller.OutputShared; [WithExtraOutputs] with an empty type, the
// output type, an unknown output kind, or a type given twice;
// [WithConcurrency](0); [WithExtraMappedInput] with a nil mapper, a type
// whose definition is invalid, the output type, or a type given twice.
// (Reconcile and MapInput of a controller registered without Validate fail
// at once with the same error.)
//
// A setting that the chosen mode does not use is not an error: it is
// ignored. [Settings.FinalizerRemovalFunc] is used only with
// [WithInputFinalizers]. Nil options are skipped.
package qtransform
