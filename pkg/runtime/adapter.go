package runtime

import (
	"context"
	"sync/atomic"

	"github.com/resgraph/resgraph/internal/opt"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/state"
)

// rwAdapter is a controller's scoped view of the state: the
// [controller.ReaderWriter] of rules C3–C5. It is safe for concurrent use
// (QController workers share one).
type rwAdapter struct {
	rt      *Runtime
	access  atomic.Pointer[accessSet]
	tracker *outputTracker // nil for QControllers
	m       *controllerMetrics
	name    string
}

var _ controller.QRuntime = (*rwAdapter)(nil)

func newRWAdapter(rt *Runtime, name string, acc *accessSet, m *controllerMetrics, tracker *outputTracker) *rwAdapter {
	a := &rwAdapter{rt: rt, name: name, m: m, tracker: tracker}
	a.access.Store(acc)
	return a
}

// deny returns the error of a refused access.
func (a *rwAdapter) deny(op, target, reason string) error {
	return controller.NewAccessDeniedError(a.name, op, target, reason)
}

// touch records the end of a runtime call, the end of a Controller's busy
// time when it is the last call before it waits for the next event.
func (a *rwAdapter) touch() {
	if a.rt.metrics {
		a.m.lastCall.Store(int64(a.rt.now()))
	}
}

// Get reads a declared input or an own output (rule C3), from the cache
// when the kind is cached: a private copy, or with [state.WithReadOnlyGet]
// the shared snapshot (rule S7).
func (a *rwAdapter) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	defer a.touch()
	if err := state.CheckPointer(ptr); err != nil {
		return nil, err
	}
	if !a.access.Load().canRead(ptr) {
		return nil, a.deny("Get", resource.PointerString(ptr), "not a declared input or output")
	}
	if c := a.rt.caches.get(dependency.KeyOf(ptr)); c.isReady() {
		return c.get(ptr, opts)
	}
	return a.rt.st.Get(ctx, ptr, opts...)
}

// List lists a kind declared as an input without an ID, or of an output
// type (rule C3), from the cache when the kind is cached: private copies,
// or with [state.WithReadOnlyList] the shared snapshots (rule S7).
func (a *rwAdapter) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	defer a.touch()
	if err := resource.ValidateKind(kind); err != nil {
		return resource.List{}, state.NewInvalidError(nil, "%w", err)
	}
	if !a.access.Load().canList(kind) {
		return resource.List{}, a.deny("List", resource.KindString(kind), "not a declared input (without ID) or output")
	}
	if c := a.rt.caches.get(dependency.KeyOf(kind)); c.isReady() {
		return c.list(opts...)
	}
	return a.rt.st.List(ctx, kind, opts...)
}

// ContextWithTeardown is the state's, for a readable resource.
func (a *rwAdapter) ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (context.Context, error) {
	defer a.touch()
	if err := state.CheckPointer(ptr); err != nil {
		return nil, err
	}
	if !a.access.Load().canRead(ptr) {
		return nil, a.deny("ContextWithTeardown", resource.PointerString(ptr), "not a declared input or output")
	}
	return a.rt.st.ContextWithTeardown(ctx, ptr)
}

// checkOutput refuses a write to a type that is not a declared output.
func (a *rwAdapter) checkOutput(op string, ptr resource.Pointer) error {
	if !a.access.Load().isOutput(ptr.Type()) {
		return a.deny(op, resource.PointerString(ptr), "not a declared output")
	}
	return nil
}

// Create creates a declared output owned by the controller (rule C4).
func (a *rwAdapter) Create(ctx context.Context, r resource.Resource, opts ...controller.CreateOption) error {
	defer a.touch()
	md, err := state.CheckResource(r)
	if err != nil {
		return err
	}
	if err := a.checkOutput("Create", md); err != nil {
		return err
	}
	var o controller.CreateOptions
	opt.Apply(&o, opts)
	owner := a.name
	if o.NoOwner {
		owner = ""
	}
	if err := a.rt.st.Create(ctx, r, state.WithCreateOwner(owner)); err != nil {
		return a.createConflict(ctx, md, owner, err)
	}
	a.tracker.record(md)
	a.refreshCache(ctx, md)
	return nil
}

// createConflict turns err, the conflict of a Create of a resource that
// exists, into an owner conflict when the existing resource has another
// owner than the one the Create was for (rule C4: writing a shared output
// another controller owns is an owner conflict, for Create as for every
// other write). The result is still a conflict; any other error is returned
// as is.
func (a *rwAdapter) createConflict(ctx context.Context, ptr resource.Pointer, owner string, err error) error {
	if !state.IsConflictError(err) || state.IsOwnerConflictError(err) {
		return err
	}
	cur, gerr := a.rt.st.Get(ctx, ptr, state.WithReadOnlyGet())
	if gerr != nil {
		return err
	}
	if have := cur.Metadata().Owner(); have != owner {
		// The state's conflict ("already exists") is replaced, not wrapped:
		// it would name the resource a second time.
		return state.NewOwnerConflictError(resource.PointerOf(ptr), "already exists, owned by %s, not %s", quoteOwner(have), quoteOwner(owner))
	}
	return err
}

// Update updates a declared output owned by the controller (rule C4).
func (a *rwAdapter) Update(ctx context.Context, r resource.Resource) error {
	defer a.touch()
	md, err := state.CheckResource(r)
	if err != nil {
		return err
	}
	if err := a.checkOutput("Update", md); err != nil {
		return err
	}
	if err := a.rt.st.Update(ctx, r, state.WithUpdateOwner(a.name)); err != nil {
		return err
	}
	a.tracker.record(md)
	a.refreshCache(ctx, md)
	return nil
}

// Modify creates or updates a declared output owned by the controller
// (rule C4). A Modify that leaves the output unchanged still counts as a
// write for output tracking (rule C8).
func (a *rwAdapter) Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) error {
	_, err := a.modify(ctx, "Modify", emptyResource, fn, opts)
	return err
}

// ModifyWithResult is Modify returning the output as stored.
func (a *rwAdapter) ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) (resource.Resource, error) {
	return a.modify(ctx, "ModifyWithResult", emptyResource, fn, opts)
}

func (a *rwAdapter) modify(ctx context.Context, op string, emptyResource resource.Resource, fn func(resource.Resource) error, opts []controller.ModifyOption) (resource.Resource, error) {
	defer a.touch()
	md, err := state.CheckResource(emptyResource)
	if err != nil {
		return nil, err
	}
	if err := a.checkOutput(op, md); err != nil {
		return nil, err
	}
	mo := controller.DefaultModifyOptions()
	opt.Apply(&mo, opts)
	owner := a.name
	if mo.NoOwner {
		owner = ""
	}
	phase := state.WithExpectedPhaseAny()
	if mo.ExpectedPhase != nil {
		phase = state.WithExpectedPhase(*mo.ExpectedPhase)
	}
	res, err := a.rt.st.ModifyWithResult(ctx, emptyResource, fn, state.WithUpdateOwner(owner), phase)
	if err != nil {
		return nil, err
	}
	a.tracker.record(md)
	a.refreshCache(ctx, md)
	return res, nil
}

// deleteOwner is the owner a Teardown or Destroy acts for.
func (a *rwAdapter) deleteOwner(opts []controller.DeleteOption) string {
	var o controller.DeleteOptions
	opt.Apply(&o, opts)
	if o.Owner != nil {
		return *o.Owner
	}
	return a.name
}

// Teardown tears down a declared output owned by the controller (or by
// the owner of [controller.WithOwner]).
func (a *rwAdapter) Teardown(ctx context.Context, ptr resource.Pointer, opts ...controller.DeleteOption) (bool, error) {
	defer a.touch()
	if err := state.CheckPointer(ptr); err != nil {
		return false, err
	}
	if err := a.checkOutput("Teardown", ptr); err != nil {
		return false, err
	}
	ready, err := a.rt.st.Teardown(ctx, ptr, state.WithTeardownOwner(a.deleteOwner(opts)))
	if err != nil {
		return false, err
	}
	a.refreshCache(ctx, ptr)
	return ready, nil
}

// Destroy destroys a declared output owned by the controller (or by the
// owner of [controller.WithOwner]).
func (a *rwAdapter) Destroy(ctx context.Context, ptr resource.Pointer, opts ...controller.DeleteOption) error {
	defer a.touch()
	if err := state.CheckPointer(ptr); err != nil {
		return err
	}
	if err := a.checkOutput("Destroy", ptr); err != nil {
		return err
	}
	if err := a.rt.st.Destroy(ctx, ptr, state.WithDestroyOwner(a.deleteOwner(opts))); err != nil {
		return err
	}
	if c := a.rt.caches.get(dependency.KeyOf(ptr)); c != nil {
		c.putDestroyed(ptr)
	}
	return nil
}

// AddFinalizer adds finalizers to a strong input, a primary input or an
// own output (rule C5).
func (a *rwAdapter) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	defer a.touch()
	if err := a.checkFinalizers(ctx, "AddFinalizer", ptr); err != nil {
		return err
	}
	if err := a.rt.st.AddFinalizer(ctx, ptr, fins...); err != nil {
		return err
	}
	a.refreshCache(ctx, ptr)
	return nil
}

// RemoveFinalizer removes finalizers from a strong input, a primary input
// or an own output (rule C5).
func (a *rwAdapter) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	defer a.touch()
	if err := a.checkFinalizers(ctx, "RemoveFinalizer", ptr); err != nil {
		return err
	}
	if err := a.rt.st.RemoveFinalizer(ctx, ptr, fins...); err != nil {
		return err
	}
	a.refreshCache(ctx, ptr)
	return nil
}

// checkFinalizers allows finalizer changes on strong and primary inputs,
// and on resources of an output type that the controller owns (rule C5).
func (a *rwAdapter) checkFinalizers(ctx context.Context, op string, ptr resource.Pointer) error {
	if err := state.CheckPointer(ptr); err != nil {
		return err
	}
	acc := a.access.Load()
	if acc.finalizerInput(ptr) {
		return nil
	}
	if !acc.isOutput(ptr.Type()) {
		return a.deny(op, resource.PointerString(ptr), "not a strong input, a primary input or an own output")
	}
	cur, err := a.rt.st.Get(ctx, ptr, state.WithReadOnlyGet())
	if err != nil {
		return err
	}
	if owner := cur.Metadata().Owner(); owner != a.name {
		return a.deny(op, resource.PointerString(ptr), "output owned by "+quoteOwner(owner)+", not by this controller")
	}
	return nil
}

func quoteOwner(o string) string {
	if o == "" {
		return "no controller"
	}
	return `"` + o + `"`
}

// refreshCache re-reads ptr into the cache of its kind, if cached, after a
// write through the engine, so that the controller reads its write (or a
// later one) at once. It reads the state's shared snapshot: never the
// caller's resource, which the caller may go on changing, and no copy.
func (a *rwAdapter) refreshCache(ctx context.Context, ptr resource.Pointer) {
	c := a.rt.caches.get(dependency.KeyOf(ptr))
	if c == nil {
		return
	}
	cur, err := a.rt.st.Get(ctx, ptr, state.WithReadOnlyGet())
	switch {
	case err == nil:
		c.putWritten(cur)
	case state.IsNotFoundError(err):
		c.putDestroyed(ptr)
	}
}
