package generic

import "errors"

// ErrSkip is the outcome signal "skip this input, nothing to do": a
// TransformFunc of transform or qtransform returns it (or an error that
// wraps it, errors.Is) to say that this input's output is neither written
// nor changed now. The controller writes nothing for the input (an
// existing output stays as it is, a missing one is not created), does not
// retry it, and logs no failure; the input counts as processed, and is
// transformed again when it (or, for a controller with extra inputs, what
// it reads) changes. The controller's input finalizer, when it holds one,
// is added as for any input (it was added before TransformFunc ran).
// The rules are written in the packages transform and qtransform.
var ErrSkip = errors.New("skip this input: nothing to do")

// ErrDestroyOutput is the outcome signal "destroy this input's output": a
// TransformFunc returns it (or an error that wraps it) to have the input's
// output torn down and destroyed as if the input were gone — the output
// is torn down, destroyed once it has no finalizers (an output with
// finalizers of other controllers waits for them, tearing down), and not
// written. No retry, no failure log. The input keeps the controller's
// input finalizer while it runs, and is transformed again when it changes:
// a later TransformFunc that fills the output writes a new one.
var ErrDestroyOutput = errors.New("destroy this input's output")

// IsSignal reports whether err is (or wraps) one of the outcome signals,
// [ErrSkip] or [ErrDestroyOutput].
func IsSignal(err error) bool {
	return errors.Is(err, ErrSkip) || errors.Is(err, ErrDestroyOutput)
}
