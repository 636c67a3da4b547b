// Package generic holds what the generic controllers of resgraph share: the
// [ResourceWithDefinition] constraint that lets them learn a resource type's
// namespace and type from a type parameter, a [NamedController] helper, and
// [PanicError], the error a recovered panic in user code becomes.
//
// The controllers themselves live in the subpackages:
//
//   - transform: a Controller mapping every resource of an input type to zero
//     or one resource of an output type.
//   - qtransform: the same contract as a QController, one input at a time.
//   - cleanup: holds a finalizer on every input and releases it only once the
//     input's dependent resources are gone.
//   - destroy: destroys a controller's own outputs once they are tearing down
//     with no finalizers left.
//
// A TransformFunc of transform or qtransform may return the outcome
// signals [ErrSkip] (nothing to do for this input: no write, no retry, no
// failure) and [ErrDestroyOutput] (destroy this input's output as if the
// input were gone); rules G1c–G1e in those packages.
//
// The generic controllers read their inputs read-only (rule S7): what they
// hand to user functions (transform and mapping functions, finalizer
// removal functions, dependents queries) are the state's shared snapshots,
// which user code never changes; only the output a TransformFunc fills is
// a private copy. To change a resource you read, use Modify or work on its
// DeepCopy.
//
// A resource of a controller's kind whose Go type is not the type parameter
// (another type registered under the same kind) fails only that resource,
// with the error pkg/safe reports for the same mistake: of the invalid
// class (state.IsInvalidError), wrapping safe.ErrTypeMismatch.
//
// Every generic controller implements controller.Validator (rule G2): a
// configuration that cannot work is refused at registration, with an error
// naming the controller and the setting, instead of failing in Run or
// Reconcile. Nil options are skipped.
//
// The rules cited here are stated in docs/generic-controllers.md in the repository.
package generic
