package runtime

import (
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/crunner"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/qrunner"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
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
// InputStrong and InputDestroyReady are), an InputDestroyReady input of a
// type the controller does not output (it would never fire), an output with
// an empty type or declared twice, a second exclusive owner of an output
// type, and an exclusive output another controller declares shared (or the
// reverse), an input or output of a type the state cannot store (a state
// that implements [state.TypeValidator] says which: a persistent state's
// codec; the error carries its reason and fix), and for declaration methods
// (Name, Inputs, Outputs) that panic (logged with the stack). A controller
// that implements [controller.Validator] is validated next: an error (or a
// panic, or a typed-nil error) from Validate refuses it the same way,
// naming the controller and wrapping Validate's error. Nothing is
// registered then. After Run returned, registration fails. An input kind
// that no registered controller outputs is allowed, and said (see
// [WithClosedGraph]); during Run, with WithClosedGraph, it refuses the
// registration. Messages read `register controller "name": ...`, the kinds
// named (InputQPrimary), never numbered.
//
// A registered Controller (rules C2, C6, C7, C8) has its Run called on a
// goroutine of its own. It receives one ReconcileEvent at start (and at
// every restart), once its inputs are watched, and one after changes to its
// inputs; changes that arrive while a wake-up waits to be taken coalesce into
// it. Resources that exist at the start are not changes. Run that returns an
// error or panics (the panic is logged with its stack; the rest of the
// Runtime keeps running) is restarted after an exponential backoff:
// [WithRestartBackoff] initial delay, doubling without jitter, capped at its
// max (by default 100 ms, capped at 1 min); ResetRestartBackoff starts over
// from the initial delay. Run returning nil before the Runtime stops ends the
// controller without a restart.
//
// UpdateInputs validates and replaces the dynamic inputs (the declared ones
// stay): changes of the new inputs flow at once, reads of them are allowed,
// and the controller is woken, once the new kinds are watched, so that it
// sees their current state. The inputs are a set (order and duplicates do
// not matter): replacing them with an equal set changes nothing and wakes
// nobody, so a controller may call UpdateInputs on every pass. Kinds are
// not unwatched during a Run.
//
// StartTrackingOutputs starts a pass; CleanupOutputs(kinds) then tears down
// every output of those kinds owned by the controller and not written
// (Create, Update, Modify — even a Modify that changed nothing) since, and
// destroys it when it has no finalizers. An output with finalizers is left
// tearing down; a later CleanupOutputs destroys it once they are gone
// (controllers typically declare their outputs as InputDestroyReady to be
// woken then). CleanupOutputs before StartTrackingOutputs is an
// invalid-class error. An output left tearing down (finalizers, or a
// destroy that failed) stays tearing down even when a later pass wants it
// again: Modify refuses it with a phase conflict (rule S2), so a controller
// that may want an output back checks its phase and destroys it (waiting
// for its finalizers) before writing it anew.
func (r *Runtime) RegisterController(ctrl controller.Controller) error {
	var (
		name    string
		static  []controller.Input
		outputs []controller.Output
	)
	if err := r.admit(dependency.FamilyController, ctrl, func() string {
		name = ctrl.Name()
		static = slices.Clone(ctrl.Inputs())
		outputs = slices.Clone(ctrl.Outputs())
		return name
	}); err != nil {
		return err
	}
	if err := r.checkTypes(registering(dependency.FamilyController, name), static, outputs); err != nil {
		return err
	}
	items, err := r.retryPolicy(dependency.FamilyController, name, ctrl)
	if err != nil {
		return err
	}
	tel := r.newTelemetry(name, 1, false)
	wake := route.NewWake()
	changes := changelog.New(0)
	ad := adapter.New(r.st, r.caches, name, adapter.NewAccess(static, nil, outputs), tel, true)
	ad.SetScheduler(r.sched)
	r.addAdapter(ad)
	var c *crunner.Runner
	c = crunner.New(crunner.Config{
		Name:         name,
		Ctrl:         ctrl,
		Logger:       r.logger,
		Restart:      retry.Backoff{Initial: r.opts.restartBackoffInitial, Max: r.opts.restartBackoffMax},
		Items:        items,
		Adapter:      ad,
		Wake:         wake,
		Changes:      changes,
		Inputs:       func() []resource.KindKey { return r.inputKinds(name) },
		Bootstrap:    r.router,
		UpdateInputs: func(inputs []controller.Input) error { return r.updateInputs(name, c, outputs, inputs) },
		Telemetry:    tel,
		Idle:         &r.idle,
		Scheduler:    r.sched,
	})
	return r.register(dependency.Record[*route.Subscriber]{
		Handle:  &route.Subscriber{Wake: wake, Telemetry: tel, Floor: ad.Floor(), Changes: changes},
		Name:    name,
		Static:  static,
		Outputs: outputs,
		Family:  dependency.FamilyController,
	}, r.lead(name, &controllerRunner{r: c, tel: tel, name: name}, ad))
}

// admit checks what a controller of family fam is before anything else of
// its registration: not nil, its declaration methods (called by declare,
// which returns the controller's name) do not panic, and its Validate (if
// any) accepts it.
func (r *Runtime) admit(fam dependency.Family, ctrl any, declare func() string) error {
	if usercode.IsNil(ctrl) {
		return state.NewInvalidError(nil, "register %s: nil controller", fam)
	}
	var name string
	if err := r.declare(fam, func() { name = declare() }); err != nil {
		return err
	}
	return r.validate(fam, name, ctrl)
}

// declare calls a controller's declaration methods (Name, Inputs,
// Outputs, Settings). A panic in them is user code failing: it is logged
// with its stack and refused as an invalid-class registration error, and
// the Runtime goes on.
func (r *Runtime) declare(what dependency.Family, fn func()) (err error) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			msg := usercode.Sprint(p.Value)
			outcome.EngineLogger(r.logger).Error("controller declaration panicked", zap.Stringer("register", what),
				zap.String("panic", msg), outcome.StackField(p))
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
func (r *Runtime) validate(what dependency.Family, name string, ctrl any) (err error) {
	v, ok := ctrl.(controller.Validator)
	if !ok {
		return nil
	}
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			msg := usercode.Sprint(p.Value)
			outcome.EngineLogger(r.logger).Error("controller Validate panicked", zap.Stringer("register", what), zap.String("controller", name),
				zap.String("panic", msg), outcome.StackField(p))
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
// input kinds a QController may declare, and InputQMappedDestroyReady only
// on the types it outputs), registration fails without an
// InputQPrimary input and for a Concurrency of Some(0): a QController that
// may run no reconcile would never make progress. None means 1. A
// QController that implements [controller.Validator] is validated like a
// Controller. A QController that implements [controller.RetryPolicyProvider]
// gets its retry policy (see [controller.RetryPolicy]); a policy that
// cannot work (a negative backoff, a max below the initial delay) or a
// RetryPolicy that panics refuses the registration the same way.
//
// A registered QController (rules Q1–Q5) has a work queue
// and Concurrency workers (default 1). The same pointer is never reconciled
// twice at once, nor reconciled and mapped at once: when a kind is both a
// primary and a mapped input (qtransform's WithExtraMappedInput of its own
// input type, for one), Reconcile(p) and MapInput(p) of one pointer p are
// serialized, the second waiting for the first (it keeps its place, without
// a delay); a pointer queued while waiting is stored once, and one queued
// while in flight runs once more afterwards. A Reconcile (or MapInput) error
// retries the item with a per-item exponential backoff ([WithQueueBackoff]);
// a [controller.RequeueError] requeues it after its interval (logged as a
// failure only when it wraps an error; a negative interval is a failure);
// success resets the item's backoff; a new change to an item waiting out a
// backoff runs it at once. A panic in Reconcile or MapInput fails that item
// only and is logged with its stack. MapInput returning a pointer that is
// not of a primary input kind (or nil, or without an ID) fails the item (the
// valid pointers are still queued); the offending pointer is logged once per
// kind (nil pointers: once). The initial List of an input kind that fails (a
// QController registered during Run lists its inputs) is retried with the
// item backoff.
//
// A QController may set its own retry policy by implementing
// [controller.RetryPolicyProvider] (see [controller.RetryPolicy]; the zero
// policy is the behaviour above): its own backoff bounds; MaxAttempts, after
// which a failing item is parked — not retried, logged ("reconcile failed;
// parked until the item changes"), listed with its last error in its
// status (observe.ControllerStatus.Parked) and still failing — until its
// next change queues it as a fresh item; and ChangeAbandonsRetry, with which
// a change to a failing item starts its attempts and backoff over.
func (r *Runtime) RegisterQController(ctrl controller.QController) error {
	var (
		name     string
		settings controller.QSettings
	)
	if err := r.admit(dependency.FamilyQController, ctrl, func() string {
		name = ctrl.Name()
		settings = ctrl.Settings()
		return name
	}); err != nil {
		return err
	}
	settings.Inputs = slices.Clone(settings.Inputs)
	settings.Outputs = slices.Clone(settings.Outputs)
	if err := r.checkTypes(registering(dependency.FamilyQController, name), settings.Inputs, settings.Outputs); err != nil {
		return err
	}
	concurrency := settings.Concurrency.ValueOr(1)
	if concurrency == 0 {
		return state.NewInvalidError(nil, "register %s %q: concurrency must be at least 1", dependency.FamilyQController, name)
	}
	items, err := r.retryPolicy(dependency.FamilyQController, name, ctrl)
	if err != nil {
		return err
	}
	tel := r.newTelemetry(name, int(concurrency), true)
	ad := adapter.New(r.st, r.caches, name, adapter.NewAccess(settings.Inputs, nil, settings.Outputs), tel, false)
	ad.SetScheduler(r.sched)
	ad.SetMappedRouting(r.mappedRouting(settings.Inputs))
	r.addAdapter(ad)
	var c *qrunner.Runner
	c = qrunner.New(qrunner.Config{
		InputsListed: func() bool { return r.router.Listed(c.InputKinds()) },
		Name:         name,
		Ctrl:         ctrl,
		Settings:     settings,
		Concurrency:  concurrency,
		Logger:       r.logger,
		Retry:        items,
		State:        r.st,
		Adapter:      ad,
		Telemetry:    tel,
		Idle:         &r.idle,
		Scheduler:    r.sched,
	})
	return r.register(dependency.Record[*route.Subscriber]{
		Handle:  c.Subscriber(),
		Name:    name,
		Static:  settings.Inputs,
		Outputs: settings.Outputs,
		Family:  dependency.FamilyQController,
	}, r.lead(name, &qcontrollerRunner{r: c, tel: tel, name: name}, ad))
}

// register adds the controller rn declared as rec to the dependency
// database (rule C1) and, during Run, starts it (rule E3). During Run, rn
// must see every existing resource of its input kinds exactly once: the
// router decides which kinds it lists itself (see route.Router.Subscribe).
func (r *Runtime) register(rec dependency.Record[*route.Subscriber], rn runner) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.phase {
	case phaseStopped:
		return errStopped
	case phaseIdle:
		if err := r.db.Add(rec); err != nil {
			return err
		}
		r.runners[rec.Name] = rn
		return nil
	}
	warn, err := r.checkWritersOfLocked(&rec)
	if err != nil {
		return err
	}
	kinds := kindsOf(rec.Static)
	existing, err := r.router.Subscribe(kinds, func() error { return r.db.Add(rec) })
	if err != nil {
		return err
	}
	warn()
	r.runners[rec.Name] = rn
	ctx := r.runCtx
	r.router.Watch(ctx, kinds...)
	r.group.Go(func() { rn.run(ctx, existing) })
	return nil
}

// registering names a registration in its errors: `register controller "name"`.
func registering(fam dependency.Family, name string) string {
	return fmt.Sprintf("register %s %q", fam, name)
}

// kindsOf returns the kinds of inputs.
func kindsOf(inputs []controller.Input) []resource.KindKey {
	keys := make([]resource.KindKey, 0, len(inputs))
	for _, in := range inputs {
		keys = append(keys, resource.KindOf(resource.NewKind(in.Namespace, in.Type)))
	}
	return keys
}

// inputKinds returns the kinds of the named controller's current inputs,
// static and dynamic.
func (r *Runtime) inputKinds(name string) []resource.KindKey {
	static, dynamic := r.db.Inputs(name)
	return kindsOf(slices.Concat(static, dynamic))
}

// updateInputs replaces the dynamic inputs of the Controller c, named
// name, which declared outputs (rule C7): it validates them, swaps the
// routing snapshot and the access scope, starts the watches of new kinds,
// and wakes the controller so that it reads the current state of its new
// inputs. Replacing the inputs with the same set does nothing, and in
// particular does not wake the controller: controllers typically call
// UpdateInputs on every pass, and a wake-up per call would make them
// reconcile forever. r.mu orders concurrent calls, so that the access scope
// always matches the database.
func (r *Runtime) updateInputs(name string, c *crunner.Runner, outputs []controller.Output, inputs []controller.Input) error {
	if err := r.checkTypes(fmt.Sprintf("update inputs of %s %q", dependency.FamilyController, name), inputs, nil); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	warn, err := r.checkDynamicWritersLocked(name, inputs)
	if err != nil {
		return err
	}
	changed, err := r.db.SetDynamic(name, inputs)
	if err != nil || !changed {
		return err
	}
	warn()
	static, dynamic := r.db.Inputs(name)
	c.SetAccess(adapter.NewAccess(static, dynamic, outputs))
	if r.phase != phaseRunning {
		c.WakeUp()
		return nil
	}
	ctx, keys := r.runCtx, kindsOf(dynamic)
	r.router.Watch(ctx, keys...)
	// The wake-up waits for the new kinds' first bootstrap, like the start
	// event, without blocking the caller; the controller counts as busy
	// until it is sent.
	send := c.DeferWakeUp()
	if !r.group.Go(func() { send(r.router.WaitBootstrapped(ctx, keys)) }) {
		send(false) // the Runtime has stopped
	}
	return nil
}

// mappedRouting returns the routing progress of the InputQMapped kinds of
// inputs, whose reads by the QController wait for routing (rule Q4; see
// adapter.SetMappedRouting).
func (r *Runtime) mappedRouting(inputs []controller.Input) map[resource.KindKey]adapter.RoutedKind {
	var kinds map[resource.KindKey]adapter.RoutedKind
	for _, in := range inputs {
		if in.Kind != controller.InputQMapped {
			continue
		}
		if kinds == nil {
			kinds = map[resource.KindKey]adapter.RoutedKind{}
		}
		k := resource.KindOf(resource.NewKind(in.Namespace, in.Type))
		kinds[k] = r.router.RoutedKind(k)
	}
	return kinds
}
