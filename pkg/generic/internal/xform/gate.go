package xform

import (
	"errors"
	"slices"

	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Gate is a controller's teardown gate: while it holds, the teardown of an
// input is ignored (the input's output is kept and computed as for a
// running input, and the controller's finalizer stays on it). It is set
// by the options WithIgnoreTeardownUntil and WithIgnoreTeardownWhile of
// transform and qtransform.
type Gate struct {
	// until: the teardown is ignored until the input holds no finalizer
	// but these (and the controller's own).
	until []resource.Finalizer
	// while: the teardown is ignored while the input holds one of these.
	while                []resource.Finalizer
	untilSet, whileSet   bool
	untilNone, whileNone bool
}

// Until adds the WithIgnoreTeardownUntil finalizers.
func (g *Gate) Until(fs []resource.Finalizer) {
	g.untilSet = true
	g.untilNone = g.untilNone || len(fs) == 0 || slices.Contains(fs, "")
	g.until = append(g.until, fs...)
}

// While adds the WithIgnoreTeardownWhile finalizers.
func (g *Gate) While(fs []resource.Finalizer) {
	g.whileSet = true
	g.whileNone = g.whileNone || len(fs) == 0 || slices.Contains(fs, "")
	g.while = append(g.while, fs...)
}

// Set reports whether a gate was given.
func (g *Gate) Set() bool { return g.untilSet || g.whileSet }

// Holds reports whether the teardown of an input whose finalizers are fs
// is ignored now; own is the controller's input finalizer ("" when it
// holds none), which never keeps a gate closed.
func (g *Gate) Holds(fs resource.Finalizers, own resource.Finalizer) bool {
	if g.whileSet {
		for _, f := range g.while {
			if fs.Has(f) {
				return true
			}
		}
	}
	if g.untilSet {
		for _, f := range fs {
			if f != own && !slices.Contains(g.until, f) {
				return true
			}
		}
	}
	return false
}

// Check returns the [Invalid] error of a gate that cannot work, naming the
// option and the fix: a gate naming no finalizer (or an empty one), a
// gate with WithIgnoreTearingDownInputs (which ignores every teardown),
// and, with input finalizers, WithIgnoreTeardownWhile naming the
// controller's own finalizer (held until the teardown proceeds: the gate
// would never open).
func (g *Gate) Check(own resource.Finalizer, ignoreTearingDown bool) error {
	switch {
	case g.untilNone:
		return Invalid("WithIgnoreTeardownUntil names no finalizer (or an empty one): name the finalizers that may remain when the teardown proceeds (the controller's own, %q, always may)", own)
	case g.whileNone:
		return Invalid("WithIgnoreTeardownWhile names no finalizer (or an empty one): name the finalizers whose presence holds the teardown")
	case g.Set() && ignoreTearingDown:
		return Invalid("WithIgnoreTearingDownInputs ignores every teardown, a teardown gate only some: give one of them")
	case own != "" && slices.Contains(g.while, own):
		return Invalid("WithIgnoreTeardownWhile names the controller's own finalizer %q, which stays until the teardown proceeds: the gate would never open", own)
	}
	return nil
}

// Signal is what a user function's error says when it is an outcome
// signal (package generic): none, skip, or destroy the output.
type Signal int

// The outcome signals.
const (
	NoSignal Signal = iota
	SignalSkip
	SignalDestroyOutput
)

// SignalOf returns the outcome signal err carries. errors.Is runs user
// code (Is methods): a panic there means no signal.
func SignalOf(err error) (s Signal) {
	if err == nil {
		return NoSignal
	}
	defer func() {
		if recover() != nil {
			s = NoSignal
		}
	}()
	switch {
	case errors.Is(err, generic.ErrSkip):
		return SignalSkip
	case errors.Is(err, generic.ErrDestroyOutput):
		return SignalDestroyOutput
	}
	return NoSignal
}

// Misplaced returns, for err of a user function fn that cannot carry an
// outcome signal (only TransformFunc can), an error of the invalid class
// naming the controller, the function and the fix; otherwise err.
func Misplaced(name, fn string, err error) error {
	if SignalOf(err) == NoSignal {
		return err
	}
	return Invalid("controller %q: %s returned an outcome signal (%v), which only TransformFunc may return: return nil from %s to change nothing, or move the decision into TransformFunc",
		name, fn, err, fn)
}
