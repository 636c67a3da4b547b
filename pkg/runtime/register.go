package runtime

import (
	"errors"
	"slices"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/state"
)

// errStopped is returned by registrations after Run returned.
var errStopped = errors.New("runtime: Run has stopped; no controller can be registered")

// RegisterController registers a Controller (rule C1). It may be called
// before Run or while Run runs (rule E3): then the controller starts at
// once. Registration fails, with an invalid-class error
// ([state.IsInvalidError]) naming the controller, for a nil controller, an
// empty or duplicate name, an input with an empty namespace or type or an
// empty ID, an input kind a Controller may not declare (only InputWeak,
// InputStrong and InputDestroyReady are), an output with an empty type or
// declared twice, a second exclusive owner of an output type, and an
// exclusive output another controller declares shared (or the reverse),
// and for declaration methods (Name, Inputs, Outputs) that panic (logged
// with the stack). A controller that implements [controller.Validator] is
// validated next: an error (or a panic, or a typed-nil error) from
// Validate refuses it the same way, naming the controller and wrapping
// Validate's error. Nothing is registered then. After Run returned,
// registration fails.
func (r *Runtime) RegisterController(ctrl controller.Controller) error {
	if usercode.IsNil(ctrl) {
		return state.NewInvalidError(nil, "register controller: nil controller")
	}
	var (
		name            string
		static, outputs = []controller.Input(nil), []controller.Output(nil)
	)
	if err := r.declare("controller", func() {
		name = ctrl.Name()
		static = slices.Clone(ctrl.Inputs())
		outputs = slices.Clone(ctrl.Outputs())
	}); err != nil {
		return err
	}
	if err := r.validate("controller", name, ctrl); err != nil {
		return err
	}
	c := newControllerRunner(r, ctrl, name, static, outputs)

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase == phaseStopped {
		return errStopped
	}
	return r.addLocked(dependency.Record[*subscriber]{
		Handle:  c.sub,
		Name:    name,
		Static:  static,
		Outputs: outputs,
		Family:  dependency.FamilyController,
	}, c)
}

// declare calls a controller's declaration methods (Name, Inputs,
// Outputs, Settings). A panic in them is user code failing: it is logged
// with its stack and refused as an invalid-class registration error, and
// the engine goes on.
func (r *Runtime) declare(what string, fn func()) (err error) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			msg := usercode.Sprint(p.Value)
			engineLogger(r.logger).Error("controller declaration panicked", zap.String("register", what),
				zap.String("panic", msg), stackField(p))
			err = state.NewInvalidError(nil, "register %s: its declaration panicked: %s", what, msg)
		}
	}()
	fn()
	return nil
}

// validate calls the Validate method of a controller that implements
// [controller.Validator], under a recovery like [Runtime.declare]'s: an
// error or a panic refuses the registration with an invalid-class error
// naming the controller (Validate's error names the setting and is
// wrapped). A typed-nil error (a nil pointer in a non-nil error, almost
// always a bug) refuses the registration too, described as such.
func (r *Runtime) validate(what, name string, ctrl any) (err error) {
	v, ok := ctrl.(controller.Validator)
	if !ok {
		return nil
	}
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			msg := usercode.Sprint(p.Value)
			engineLogger(r.logger).Error("controller Validate panicked", zap.String("register", what), zap.String("controller", name),
				zap.String("panic", msg), stackField(p))
			err = state.NewInvalidError(nil, "register %s %q: Validate panicked: %s", what, name, msg)
		}
	}()
	verr := v.Validate()
	switch {
	case verr == nil:
		return nil
	case usercode.IsNil(verr):
		return state.NewInvalidError(nil, "register %s %q: Validate returned a typed-nil %T", what, name, verr)
	default:
		// Formatting calls verr's Error method, still under the recovery.
		return state.NewInvalidError(nil, "register %s %q: %w", what, name, verr)
	}
}

// RegisterQController registers a QController (rules C1, Q5), before or
// during Run (rule E3). Besides the checks of [Runtime.RegisterController]
// (with InputQPrimary, InputQMapped and InputQMappedDestroyReady as the
// input kinds a QController may declare), registration fails without an
// InputQPrimary input and for a Concurrency of Some(0): a QController that
// may run no reconcile would never make progress. None means 1. A
// QController that implements [controller.Validator] is validated like a
// Controller.
func (r *Runtime) RegisterQController(ctrl controller.QController) error {
	if usercode.IsNil(ctrl) {
		return state.NewInvalidError(nil, "register qcontroller: nil controller")
	}
	var (
		name     string
		settings controller.QSettings
	)
	if err := r.declare("qcontroller", func() {
		name = ctrl.Name()
		settings = ctrl.Settings()
	}); err != nil {
		return err
	}
	if err := r.validate("qcontroller", name, ctrl); err != nil {
		return err
	}
	settings.Inputs = slices.Clone(settings.Inputs)
	settings.Outputs = slices.Clone(settings.Outputs)
	concurrency := settings.Concurrency.ValueOr(1)
	if concurrency == 0 {
		return state.NewInvalidError(nil, "register qcontroller %q: concurrency must be at least 1", name)
	}
	c := newQControllerRunner(r, ctrl, name, settings, concurrency)

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.phase == phaseStopped {
		return errStopped
	}
	return r.addLocked(dependency.Record[*subscriber]{
		Handle:  c.sub,
		Name:    name,
		Static:  settings.Inputs,
		Outputs: settings.Outputs,
		Family:  dependency.FamilyQController,
	}, c)
}

// addLocked adds the controller rn declared as rec to the dependency
// database (rule C1) and, during Run, starts it (rule E3). The caller holds
// r.mu and has checked that Run has not stopped.
//
// During Run, rn must see every existing resource of its input kinds
// exactly once: from the first bootstrap of the kind's watch when that has
// not been routed yet (rn is then in the snapshot that routes it), or else
// from a list of its own (rn is then told that the kind existed). The
// watchers' bootMu, held from before rn is added until this is decided,
// keeps a first bootstrap from being routed in between.
func (r *Runtime) addLocked(rec dependency.Record[*subscriber], rn runner) error {
	if r.phase != phaseRunning {
		if err := r.db.Add(rec); err != nil {
			return err
		}
		r.runners[rec.Name] = rn
		return nil
	}

	var watchers []*kindWatcher
	for _, in := range rec.Static {
		w := r.router.watcherLocked(dependency.Key{Namespace: in.Namespace, Type: in.Type})
		if !slices.Contains(watchers, w) {
			watchers = append(watchers, w)
		}
	}
	// Only registrations lock several bootMus, and they are serialized by
	// r.mu; a watch goroutine locks only its own.
	for _, w := range watchers {
		w.bootMu.Lock()
	}
	err := r.db.Add(rec)
	var existing []dependency.Key
	if err == nil {
		for _, w := range watchers {
			if w.bootRouted {
				existing = append(existing, w.key)
			}
		}
	}
	for _, w := range watchers {
		w.bootMu.Unlock()
	}
	if err != nil {
		return err
	}

	r.runners[rec.Name] = rn
	ctx := r.runCtx
	for _, w := range watchers {
		r.router.ensureWatchLocked(ctx, w.key)
	}
	r.goLocked(func() { rn.run(ctx, existing) })
	return nil
}

// updateInputs replaces the dynamic inputs of a Controller (rule C7): it
// validates them, swaps the routing snapshot and the access scope, starts
// the watches of new kinds, and wakes the controller so that it reads the
// current state of its new inputs. Replacing the inputs with the same set
// does nothing, and in particular does not wake the controller: controllers
// typically call UpdateInputs on every pass, and a wake-up per call would
// make them reconcile forever.
func (r *Runtime) updateInputs(c *controllerRunner, inputs []controller.Input) error {
	r.mu.Lock()
	changed, err := r.db.SetDynamic(c.name, inputs)
	if err != nil || !changed {
		r.mu.Unlock()
		return err
	}
	static, dynamic := r.db.Inputs(c.name)
	c.adapter.access.Store(newAccessSet(static, dynamic, c.outputs))
	if r.phase != phaseRunning {
		r.mu.Unlock()
		c.wakeUp()
		return nil
	}
	keys := make([]dependency.Key, 0, len(dynamic))
	for _, in := range dynamic {
		k := dependency.Key{Namespace: in.Namespace, Type: in.Type}
		r.router.ensureWatchLocked(r.runCtx, k)
		keys = append(keys, k)
	}
	ready := r.router.bootstrappedLocked(keys)
	ctx := r.runCtx
	// The wake-up waits for the new kinds' first bootstrap, like the start
	// event, without blocking the caller.
	r.goLocked(func() {
		if waitAll(ctx, ready) {
			c.wakeUp()
		}
	})
	r.mu.Unlock()
	return nil
}
