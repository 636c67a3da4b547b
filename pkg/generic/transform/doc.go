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
//     its output type as an InputDestroyReady input to be woken up then).
//     After every start, the controller also destroys its outputs that
//     belong to no input.
//   - An input that is created again while its previous output is still
//     tearing down gets a fresh output once the old one's finalizers are
//     gone: the old output is destroyed and a new one is created.
//   - With [WithInputFinalizers], the controller puts a finalizer named after
//     itself on every input before writing its output, and removes it from
//     a tearing-down input only after the input's output is destroyed and
//     [Settings.FinalizerRemovalFunc] (if set) agrees.
//   - A failure for one input (an error or a panic in a user function, a
//     mapping to nil or outside O's kind, a refused write) fails that input
//     only: the pass goes on, the failing input's existing output is kept
//     as it was, and the input is retried on its own schedule, with the
//     Runtime's per-item backoff (runtime.WithQueueBackoff: 100 ms doubling
//     to 1 min by default; a wake-up timer inside Run) or the controller's
//     own ([WithRetryPolicy]), or at once when it changes; a
//     controller.RequeueError returned by a user function retries it after
//     its interval (a failure only if it wraps an error), as it does a
//     QController's item (rule Q3). With a retry policy's MaxAttempts, an
//     input whose runs failed that many times in a row is parked until it
//     changes, and an input denied access (rule C3: a write to an output
//     type the controller does not declare) is parked at once, a
//     programming error logged at ERROR; with its ChangeAbandonsRetry, a change starts the input's
//     backoff over (with [WithExtraInputs], whose wake-ups transform every
//     input, a wake-up is a change of every input). Other inputs are
//     not delayed and are not transformed again, and Run does not fail: the
//     Runtime's restart backoff is for the controller as a whole (listing
//     its inputs or outputs failing, or a panic in Run itself). An output
//     that cannot be destroyed is retried the same way. Each failure is
//     logged at WARN (no stack trace) with the input's pointer, the delay
//     and the count of consecutive failed runs, and reported to the Runtime
//     (controller.ErrorReporter), so that it shows as the controller's last
//     error; its error says what failed ("input <pointer>: TransformFunc:
//     …", "input <pointer>: write output <pointer>: …"). Panics in user
//     functions are recovered, logged at ERROR with their stack, and
//     become a *generic.PanicError. The controller settles once every
//     input has succeeded.
//
// # Input finalizers (off by default)
//
// [WithInputFinalizers] and [WithoutInputFinalizers] are spelled as in
// qtransform, but the default differs: a transform Controller holds no
// finalizer on its inputs unless told to, a qtransform QController holds
// one unless told not to. The reason: a transform Controller keeps track
// of all of its inputs and outputs and destroys each output whose
// input is gone (output tracking), so it cleans up after a vanished input
// without holding it; a finalizer costs a write per input and a strong
// input, and makes every input's teardown wait on the controller, which
// only a chain that needs "the output goes before its input" should pay
// for. A QController sees one pointer at a time and holds its inputs by
// default so that it tears an output down while the input (and its
// metadata) still exists. Both defaults are fixed by the API contract.
// Giving both options is refused (rule G2).
//
// # Read-only inputs (rule S7)
//
// The controller lists its inputs read-only: the inputs handed to
// TransformFunc, TransformExtraOutputFunc and FinalizerRemovalFunc, and
// to the mapping functions, are the state's shared snapshots, never
// copied. A user function never changes them (the state's mutation
// detector, on in tests, reports a change when the input is next
// written). The output handed to TransformFunc is the controller's private
// copy, to fill. To change an input itself, write it through the state
// (or the controller that owns it) with Modify, which never changes the
// resource it is given and hands its function a private copy:
//
//	err := st.Modify(ctx, in, func(r resource.Resource) error {
//		r.(*Link).TypedSpec().MTU = 9000 // a private copy
//		return nil
//	})
//
// A pass processes only the inputs that changed since the previous pass
// (by version and creation time), the failing inputs that are due, and
// those waiting for an output to go, unless the controller has extra
// inputs: then every pass (after any wake-up) transforms every input,
// since TransformFunc may read the extra inputs. The first pass of every
// Run transforms every input, and looks for the controller's outputs that
// belong to no input (left by an earlier run) to destroy them, as soon as
// every input's output is known.
//
// A pass costs what changed (rule G3): woken by input changes, it reads
// (one Get each) the inputs the Runtime's change log names and those not
// done, and lists nothing; it lists every input (a full pass) when the log
// cannot say what changed — the first pass of a Run, after a re-list of
// the input kind or an overflow of the log, under a Runtime that keeps no
// log — with extra inputs, until the orphan outputs were looked for, and
// when the changes are more than half of the inputs known. It sizes the
// log for half its inputs (changelog.Sizer), so that the log overflows
// only where the pass would be a full one anyway.
//
// The controller assumes it is the only writer of its outputs
// (downstream controllers add and remove finalizers, which is fine), and
// that the mapping is injective: two inputs never map to the same output.
//
// # Teardown gates and outcome signals (rule G1, extended)
//
// These are qtransform's rules G1a–G1e, on a pass: [WithIgnoreTeardownUntil]
// and [WithIgnoreTeardownWhile] keep a tearing-down input active (its
// output computed and written, the input finalizer kept) while their gate
// holds; a TransformFunc returning generic.ErrSkip leaves the input's
// output as it is (not written, not destroyed by the pass's output
// tracking, not created when missing), with no retry and no failure
// reported; generic.ErrDestroyOutput has the output destroyed with the
// pass's outputs that lost their input (a running input keeps its
// finalizer). A signal from TransformExtraOutputFunc or a finalizer-removal
// function is an invalid-class error naming the controller; gates naming
// no finalizer, combined with [WithIgnoreTearingDownInputs], or holding on
// the controller's own finalizer are refused (G2).
//
// # Misconfiguration (rule G2)
//
// [NewController] cannot fail; [Controller.Validate] (controller.Validator)
// reports a configuration that cannot work, and the Runtime calls it at
// registration: RegisterController refuses the controller with an error of
// the invalid class (state.IsInvalidError) that names the controller and
// the setting, so that a static misconfiguration never reaches Run and
// never becomes a retry loop. Refused are: an empty Name; an input or
// output type whose definition panics or has an empty type or namespace,
// or whose spec cannot be deep-copied (a func, a channel, a sync
// primitive); the same input and output type; both [WithInputFinalizers]
// and [WithoutInputFinalizers]; neither or both of MapMetadataFunc and
// MapMetadataOptionalFunc; both FinalizerRemovalFunc and
// FinalizerRemovalExtraOutputFunc; the teardown gates of G1e; a nil
// TransformFunc; [WithOutputKind] with a
// kind other than controller.OutputExclusive or controller.OutputShared;
// [WithExtraOutputs] with an empty type, the output type, an unknown
// output kind, or a type given twice; [WithExtraInputs] with an input kind
// other than weak or strong, the input kind itself, or the output type.
// (Run of a controller registered without Validate fails at once with the
// same error.)
//
// A setting that the chosen mode does not use is not an error: it is
// ignored. [Settings.FinalizerRemovalFunc] is used only with
// [WithInputFinalizers]. [WithExtraOutputs] without a
// TransformExtraOutputFunc still declares the outputs, which nothing
// writes. Nil options are skipped.
//
// The rules cited here are stated in docs/generic-controllers.md in the repository.
package transform
