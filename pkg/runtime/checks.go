package runtime

import (
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/state"
)

// The Runtime's checks of what controllers declare against the state and
// against each other (rule G2), beyond each controller's own declarations
// (package dependency): every input and output type is one the state can
// store, and every input kind is written by some registered controller —
// or, when not, that is said (a WARN, a mark on the graph, a line in
// explain), and refused with WithClosedGraph.

// anyNamespace is the namespace in which an output declared without one is
// checked against the state: the state's type check is about types.
const anyNamespace = "*"

// noWriterWhy is what the Runtime says about an input kind no registered
// controller outputs.
const noWriterWhy = "no controller writes this kind; only outside writers wake this input"

// checkTypes asks the state whether it can store every input and output
// type a controller declares (state.TypeValidator): a type it cannot store
// (not registered in its codec, for a persistent state) would fail at its
// first read or write, so it refuses the declaration with an invalid-class
// error that starts with what (`register controller "name"`) and names the
// input or output and the fix. The state's check is its code: a panic
// refuses the declaration too.
func (r *Runtime) checkTypes(what string, inputs []controller.Input, outputs []controller.Output) error {
	if _, ok := r.st.(state.TypeValidator); !ok {
		return nil
	}
	for _, in := range inputs {
		if in.Namespace == "" || in.Type == "" {
			continue // refused by the declaration checks
		}
		if err := r.validateType(resource.NewKind(in.Namespace, in.Type)); err != nil {
			return state.NewInvalidError(nil, "%s: input %s(%s): the state cannot store this type: %w",
				what, in.Type, in.Namespace, err)
		}
	}
	for _, out := range outputs {
		if out.Type == "" {
			continue // refused by the declaration checks
		}
		ns := out.Namespace
		if ns == "" {
			ns = anyNamespace
		}
		if err := r.validateType(resource.NewKind(ns, out.Type)); err != nil {
			return state.NewInvalidError(nil, "%s: output %s: the state cannot store this type: %w",
				what, out.Type, err)
		}
	}
	return nil
}

// validateType calls the state's ValidateType under a recovery; the
// error it returns has its text read once, safely (it is the state's).
func (r *Runtime) validateType(k resource.Kind) (err error) {
	if p := usercode.Call(func() { err = state.ValidateType(r.st, k) }); p != nil {
		return fmt.Errorf("the state's ValidateType panicked: %s", usercode.Sprint(p.Value))
	}
	if err == nil || usercode.IsNil(err) {
		return nil
	}
	return textError{text: usercode.ErrorText(err), err: err}
}

// textError is an error whose text was read already.
type textError struct {
	text string
	err  error
}

func (e textError) Error() string { return e.text }
func (e textError) Unwrap() error { return e.err }

// unwrittenError is the error of input kinds no registered controller
// writes, refused with WithClosedGraph; what names the call.
func unwrittenError(what string, us []dependency.Unwritten) error {
	parts := make([]string, 0, len(us))
	for _, u := range us {
		parts = append(parts, fmt.Sprintf("controller %q: input %s", u.Controller, u.Kind))
	}
	return state.NewInvalidError(nil, "%s: %s: %s (the Runtime runs with WithClosedGraph: register the controller that writes "+
		"each kind before the ones that read it, fix the input's namespace or type, or drop WithClosedGraph if outside writers "+
		"are expected)", what, strings.Join(parts, "; "), noWriterWhy)
}

// noWriterMsg is the message of the WARN about input kinds no controller
// writes.
const noWriterMsg = "no controller writes this input kind; only outside writers wake it"

// warnUnwrittenLocked logs the input kinds of us, one WARN per kind naming
// the controllers that read it, each controller and kind once per Runtime.
// The caller holds r.mu.
func (r *Runtime) warnUnwrittenLocked(us []dependency.Unwritten) {
	if r.warnedUnwritten == nil {
		r.warnedUnwritten = map[dependency.Unwritten]struct{}{}
	}
	byKind := map[resource.KindKey][]string{}
	var kinds []resource.KindKey
	for _, u := range us {
		if _, done := r.warnedUnwritten[u]; done {
			continue
		}
		r.warnedUnwritten[u] = struct{}{}
		if byKind[u.Kind] == nil {
			kinds = append(kinds, u.Kind)
		}
		byKind[u.Kind] = append(byKind[u.Kind], u.Controller)
	}
	slices.SortFunc(kinds, resource.KindKey.Compare)
	for _, k := range kinds {
		outcome.EngineLogger(r.logger).Warn(noWriterMsg, zap.Stringer("kind", k), zap.Strings("controllers", byKind[k]))
	}
}

// expectedOutside drops from us the kinds declared written by outside
// writers (WithOutsideWriters).
func (r *Runtime) expectedOutside(us []dependency.Unwritten) []dependency.Unwritten {
	if len(r.opts.outsideWriters) == 0 {
		return us
	}
	return slices.DeleteFunc(us, func(u dependency.Unwritten) bool {
		_, ok := r.opts.outsideWriters[u.Kind]
		return ok
	})
}

// checkWritersAtRunLocked is Run's check of every registered controller's
// input kinds: refused with WithClosedGraph, otherwise a WARN each. The
// caller holds r.mu.
func (r *Runtime) checkWritersAtRunLocked() error {
	us := r.expectedOutside(dependency.UnwrittenOf(r.db.Records()))
	if len(us) > 0 && r.opts.closedGraph {
		return unwrittenError("runtime: Run", us)
	}
	r.warnUnwrittenLocked(us)
	return nil
}

// checkWritersOfLocked checks the input kinds of rec, a controller being
// registered during Run, against the controllers registered (rec
// included): refused with WithClosedGraph, otherwise said once Add
// succeeded (warn). The caller holds r.mu.
func (r *Runtime) checkWritersOfLocked(rec *dependency.Record[*route.Subscriber]) (warn func(), err error) {
	recs := append(r.db.Records(), *rec)
	us := r.expectedOutside(dependency.UnwrittenInputs(recs, rec.Name, rec.Static))
	if len(us) > 0 && r.opts.closedGraph {
		return nil, unwrittenError(fmt.Sprintf("register %s %q", rec.Family, rec.Name), us)
	}
	return func() { r.warnUnwrittenLocked(us) }, nil
}

// checkDynamicWritersLocked checks the kinds of the dynamic inputs a
// Controller's UpdateInputs declares, as checkWritersOfLocked does
// (during Run only; Run checks them otherwise). The caller holds r.mu.
func (r *Runtime) checkDynamicWritersLocked(name string, inputs []controller.Input) (warn func(), err error) {
	if r.phase != phaseRunning || !r.db.ChangesDynamic(name, inputs) {
		return func() {}, nil
	}
	us := r.expectedOutside(dependency.UnwrittenInputs(r.db.Records(), name, inputs))
	if len(us) > 0 && r.opts.closedGraph {
		return nil, unwrittenError(fmt.Sprintf("update inputs of controller %q", name), us)
	}
	return func() { r.warnUnwrittenLocked(us) }, nil
}
