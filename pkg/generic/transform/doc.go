// Package transform provides a generic Controller that maps every resource
// of an input type I to zero or one resource of an output type O.
//
// For each input, [Settings.MapMetadataFunc] (exactly one output) or
// [Settings.MapMetadataOptionalFunc] (zero or one) names the output, and
// [Settings.TransformFunc] fills its spec. Inputs are read from I's default
// namespace; outputs live in O's default namespace, with O's type.
//
// Guarantees:
//
//   - Outputs are written with Modify (a new output may be written with
//     Create) and owned by the controller. TransformFunc runs on a copy of
//     the stored output (or on the mapped output when it does not exist
//     yet), and an output whose content is unchanged is not written: no
//     version bump, no event. Chains of transforms settle instead of
//     rippling.
//   - An output whose input is gone (destroyed, tearing down, no longer
//     matching [WithInputListOptions], or mapped to None or to another
//     output) is torn down and destroyed; one that has finalizers is left
//     tearing down and destroyed once they are gone (the controller declares
//     its output type as an InputDestroyReady input to be woken up then). On its first
//     pass after every start, the controller also destroys its outputs that
//     belong to no input, using output tracking (StartTrackingOutputs and
//     CleanupOutputs).
//   - An input that is created again while its previous output is still
//     tearing down gets a fresh output once the old one's finalizers are
//     gone: the old output is destroyed and a new one is created.
//   - With [WithInputFinalizers], the controller puts a finalizer named after
//     itself on every input before writing its output, and removes it from
//     a tearing-down input only after the input's output is destroyed and
//     [Settings.FinalizerRemovalFunc] (if set) agrees.
//   - A failure for one input (an error or a panic in a user function, a
//     mapping to nil or outside O's kind, a refused write) does not stop the
//     others: the pass goes on, the failing input's existing output is kept
//     as it was, and Run then returns an error that joins every failure and
//     names each input, so that the engine restarts the controller with
//     backoff and the pass is retried. Panics are recovered and become a
//     *generic.PanicError.
//   - Misconfiguration (neither or both mapping functions set, an invalid
//     definition, a bad option) cannot be reported by [NewController]: the
//     controller's Run fails at once with an error of the invalid class
//     (state.IsInvalidError) that says what is wrong.
//
// A pass processes only the inputs that changed since the previous pass
// (by version and creation time), unless the controller has extra inputs:
// then every pass transforms every input, since TransformFunc may read the
// extra inputs. The controller assumes it is the only writer of its outputs
// (downstream controllers add and remove finalizers, which is fine), and
// that the mapping is injective: two inputs never map to the same output.
package transform
