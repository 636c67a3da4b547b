// Package adapter is a controller's scoped view of the state: the
// [controller.ReaderWriter] the Runtime hands to Controllers and
// QControllers. It checks every call against the controller's declared
// inputs and outputs (rules C3–C5), writes as the controller (rule C4),
// reads through the Runtime's cache for cached kinds and keeps the cache in
// step with its writes (read your writes), and tracks a Controller's
// outputs for CleanupOutputs (rule C8).
//
// Its dependencies are exactly what it uses: the state, the caches, the
// controller's name and access scope, and its telemetry sink, to which it
// reports the end of every call (the writes that committed included).
package adapter

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/state"
)

// Adapter is the [controller.ReaderWriter] of one controller, with the
// output tracking of a Controller. It is safe for concurrent use
// (QController workers share one).
type Adapter struct {
	st     state.State
	caches *cache.Set
	// floor is the revision the controller's reads must reach (see
	// cache.Floor): raised by its writes here, by the router before it is
	// woken.
	floor   cache.Floor
	access  atomic.Pointer[Access]
	tracker *tracker // nil unless outputs are tracked
	tel     *telemetry.Controller
	name    string
	// snaps tracks the snapshots handed to the controller (nil unless
	// the state watches them).
	snaps *Snapshots
	// opts are the state options of the controller's writes.
	opts writeOptions
	// sched gates each write (sched.GateWrite).
	sched sched.Scheduler
	// gated is set when sched is not sched.Direct (a simulator's).
	gated bool
	// pass is the commit log and what the current pass read.
	pass passLog
	// mapped makes the reads of a QController's mapped kinds wait for
	// routing (nil: none do).
	mapped *mappedReads
	// workers is set when the workers that run the controller's items
	// are numbered: its writes then name their worker in the trace
	// (SetWorkers).
	workers bool
}

var _ controller.QRuntime = (*Adapter)(nil)

// New returns the adapter of the controller name over st, scoped by access;
// reads of the kinds caches holds are served from them. trackOutputs
// enables StartTrackingOutputs and CleanupOutputs (Controllers). Every call
// is reported to tel.
func New(st state.State, caches *cache.Set, name string, access *Access, tel *telemetry.Controller, trackOutputs bool) *Adapter {
	a := &Adapter{st: st, caches: caches, name: name, tel: tel, snaps: newSnapshots(st, name), opts: newWriteOptions(name), sched: sched.Or(nil)}
	if trackOutputs {
		a.tracker = &tracker{}
	}
	a.access.Store(access)
	return a
}

// SetScheduler makes every write of the controller wait at s's gate
// (sched.GateWrite) first; before it is set, writes go at once. It is
// called before the controller runs.
func (a *Adapter) SetScheduler(s sched.Scheduler) {
	a.sched = sched.Or(s)
	a.gated = a.sched != sched.Or(nil)
}

// gateWrite waits until the scheduler lets the write to ptr go: nil, or
// the reason it did not (the controller's context, or the Runtime, is
// stopping).
func (a *Adapter) gateWrite(ctx context.Context, ptr resource.Pointer) error {
	if !a.gated { // sched.Direct lets every write go
		return nil
	}
	g := sched.Gate{Kind: sched.GateWrite, Controller: a.name, Item: resource.PointerOf(ptr)}
	if p := a.itemOf(ctx); p != nil {
		g.Source = p.item
	}
	if a.sched.Gate(ctx, g) {
		return nil
	}
	return cmp.Or(ctx.Err(), context.Canceled)
}

// Snapshots is the controller as a holder of the state's shared
// snapshots: nil when the state does not watch them.
func (a *Adapter) Snapshots() *Snapshots { return a.snaps }

// Floor is the revision the controller's reads must reach: the router
// raises it before the controller is woken or its items are queued.
func (a *Adapter) Floor() *cache.Floor { return &a.floor }

// SetAccess replaces the access scope (the controller's dynamic inputs
// changed).
func (a *Adapter) SetAccess(access *Access) { a.access.Store(access) }

// deny returns the error of a refused access.
func (a *Adapter) deny(op, target, reason string) error {
	return controller.NewAccessDeniedError(a.name, op, target, reason)
}

// getEnded ends a Get (cached or not) that returned r and err: a
// resource read is handed out (rule S7) and the call is counted.
func (a *Adapter) getEnded(ptr resource.Pointer, opts []state.GetOption, r resource.Resource, err error) {
	if err == nil {
		a.snaps.handGet(r, opts)
	}
	a.tel.CallEnded(telemetry.OpGet, ptr, err)
}

// listEnded ends a List (cached or not) that returned l and err, as
// getEnded ends a Get.
func (a *Adapter) listEnded(kind resource.Kind, opts []state.ListOption, l resource.List, err error) {
	if err == nil {
		a.snaps.handList(l, opts)
	}
	a.tel.CallEnded(telemetry.OpList, kind, err)
}

// Get reads a declared input or an own output (rule C3), from the cache
// when the kind is cached: a private copy, or with [state.WithReadOnlyGet]
// the shared snapshot (rule S7).
func (a *Adapter) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if a.passed() {
		return a.getNoted(ctx, ptr, opts)
	}
	return a.get(ctx, ptr, opts)
}

// getNoted is Get while a CommitLog is set: the read's revision is noted
// in its pass (readDone).
func (a *Adapter) getNoted(ctx context.Context, ptr resource.Pointer, opts []state.GetOption) (resource.Resource, error) {
	n := a.takeNote()
	r, err := a.get(ctx, ptr, n.getOpts(opts))
	a.readDone(ctx, n, ptr, err)
	return r, err
}

// get is Get with the options it reads with.
func (a *Adapter) get(ctx context.Context, ptr resource.Pointer, opts []state.GetOption) (r resource.Resource, err error) {
	defer func() { a.getEnded(ptr, opts, r, err) }()
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if !a.access.Load().canRead(ptr) {
		return nil, a.deny("Get", resource.PointerString(ptr), "not a declared input or output")
	}
	if c := a.caches.Get(resource.KindOf(ptr)); c.Ready() {
		r, served, err := c.GetAt(ptr, opts, a.floor.Load())
		if !served && a.verify(ctx, c, ptr) {
			r, served, err = c.GetAt(ptr, opts, a.floor.Load())
		}
		if served {
			return r, err
		}
	}
	return a.stateGet(ctx, ptr, opts)
}

// stateGet reads ptr from the state, not ahead of routing for a mapped
// kind (see mappedReads).
func (a *Adapter) stateGet(ctx context.Context, ptr resource.Pointer, opts []state.GetOption) (resource.Resource, error) {
	if a.mapped != nil {
		if rk := a.routedOf(resource.KindOf(ptr)); rk != nil {
			return a.getRouted(ctx, rk, ptr, opts)
		}
	}
	return a.st.Get(ctx, ptr, opts...)
}

// List lists a kind declared as an input without an ID, or of an output
// type (rule C3), from the cache when the kind is cached: private copies,
// or with [state.WithReadOnlyList] the shared snapshots (rule S7).
func (a *Adapter) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if a.passed() {
		return a.listNoted(ctx, kind, opts)
	}
	return a.list(ctx, kind, opts)
}

// listNoted is List while a CommitLog is set, as getNoted is Get.
func (a *Adapter) listNoted(ctx context.Context, kind resource.Kind, opts []state.ListOption) (resource.List, error) {
	n := a.takeNote()
	l, err := a.list(ctx, kind, n.listOpts(opts))
	a.readDone(ctx, n, kind, err)
	return l, err
}

// list is List with the options it lists with.
func (a *Adapter) list(ctx context.Context, kind resource.Kind, opts []state.ListOption) (l resource.List, err error) {
	defer func() { a.listEnded(kind, opts, l, err) }()
	if err := resource.ValidateKind(kind); err != nil {
		return resource.List{}, err
	}
	if !a.access.Load().canList(kind) {
		return resource.List{}, a.deny("List", resource.KindString(kind), "not a declared input (without ID) or output")
	}
	if err := checkListOptions(kind, opts); err != nil {
		return resource.List{}, err
	}
	if c := a.caches.Get(resource.KindOf(kind)); c.Ready() {
		l, served, err := c.ListAt(opts, a.floor.Load())
		if !served && a.verify(ctx, c, kind) {
			l, served, err = c.ListAt(opts, a.floor.Load())
		}
		if served {
			return l, err
		}
	}
	return a.stateList(ctx, kind, opts)
}

// stateList lists kind from the state, not ahead of routing for a mapped
// kind (see mappedReads).
func (a *Adapter) stateList(ctx context.Context, kind resource.Kind, opts []state.ListOption) (resource.List, error) {
	if a.mapped != nil {
		if rk := a.routedOf(resource.KindOf(kind)); rk != nil {
			return a.listRouted(ctx, rk, kind, opts)
		}
	}
	return a.st.List(ctx, kind, opts...)
}

// ContextWithTeardown is the state's, for a readable resource.
func (a *Adapter) ContextWithTeardown(ctx context.Context, ptr resource.Pointer) (tctx context.Context, err error) {
	defer func() { a.tel.CallEnded(telemetry.OpContextWithTeardown, ptr, err) }()
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if !a.access.Load().canRead(ptr) {
		return nil, a.deny("ContextWithTeardown", resource.PointerString(ptr), "not a declared input or output")
	}
	return a.st.ContextWithTeardown(ctx, ptr)
}

// checkOutput refuses a write to a type that is not a declared output.
func (a *Adapter) checkOutput(op string, ptr resource.Pointer) error {
	if !a.access.Load().isOutput(ptr.Type()) {
		return a.deny(op, resource.PointerString(ptr), "not a declared output")
	}
	return nil
}

// checkWrite checks a resource written by op: usable (rule R3) and of a
// declared output type (rule C3). It returns its metadata.
func (a *Adapter) checkWrite(op string, r resource.Resource) (*resource.Metadata, error) {
	md, err := state.ValidateResource(r)
	if err != nil {
		return nil, err
	}
	return md, a.checkOutput(op, md)
}

// Create creates a declared output owned by the controller (rule C4).
func (a *Adapter) Create(ctx context.Context, r resource.Resource, opts ...controller.CreateOption) error {
	return a.create(ctx, r, false, opts)
}

// CreateGiven is Create for a caller that gives r up (a generic
// controller's output, made for this write): the caller keeps no
// reference to r once the call returned and never changes it again, so
// that the state may store r itself, without a copy (see givingCreator).
// It is not part of [controller.Writer]: a controller's Create stores a
// copy of what it is given (rule S7).
func (a *Adapter) CreateGiven(ctx context.Context, r resource.Resource, opts ...controller.CreateOption) error {
	return a.create(ctx, r, true, opts)
}

// givingCreator is a state whose Create can store the resource it is
// given as is when the caller gives it up (the states state.WrapCore
// returns: CreateGiven over a core that can keep what it is given, the
// inmem state's).
type givingCreator interface {
	CreateGiven(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error
}

// create is Create and, with give, CreateGiven.
func (a *Adapter) create(ctx context.Context, r resource.Resource, give bool, opts []controller.CreateOption) (err error) {
	var target resource.Pointer
	defer func() { a.tel.WriteEnded(telemetry.OpCreate, target, a.workerOf(ctx), err) }()
	md, err := a.checkWrite("Create", r)
	if err != nil {
		return err
	}
	target = md
	if err := a.gateWrite(ctx, md); err != nil {
		return err
	}
	noOwner := len(opts) > 0 && createNoOwner(opts)
	owner := a.name
	if noOwner {
		owner = ""
	}
	stOpts := a.opts.create[ownerIndex(noOwner)]
	g, ok := a.st.(givingCreator)
	if ok && give && !md.Frozen() { // a snapshot is no caller's to give
		err = g.CreateGiven(ctx, r, stOpts...)
	} else {
		err = a.st.Create(ctx, r, stOpts...)
	}
	if err != nil {
		return a.createConflict(ctx, md, owner, err)
	}
	a.logCommit(ctx, md, md.Version().Value())
	a.written(ctx, md)
	return nil
}

// createConflict turns err, the conflict of a Create of a resource that
// exists, into an owner conflict when the existing resource has another
// owner than the one the Create was for (rule C4: writing a shared output
// another controller owns is an owner conflict, for Create as for every
// other write). The result is still a conflict; any other error is returned
// as is.
func (a *Adapter) createConflict(ctx context.Context, ptr resource.Pointer, owner string, err error) error {
	if !state.IsConflictError(err) || state.IsOwnerConflictError(err) {
		return err
	}
	cur, gerr := a.st.Get(ctx, ptr, state.WithReadOnlyGet())
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
func (a *Adapter) Update(ctx context.Context, r resource.Resource) (err error) {
	var target resource.Pointer
	defer func() { a.tel.WriteEnded(telemetry.OpUpdate, target, a.workerOf(ctx), err) }()
	md, err := a.checkWrite("Update", r)
	if err != nil {
		return err
	}
	target = md
	if err := a.gateWrite(ctx, md); err != nil {
		return err
	}
	if err := a.st.Update(ctx, r, a.opts.update...); err != nil {
		return err
	}
	a.logCommit(ctx, md, md.Version().Value())
	a.written(ctx, md)
	return nil
}

// Modify creates or updates a declared output owned by the controller
// (rule C4). A Modify that leaves the output unchanged still counts as a
// write for output tracking (rule C8).
func (a *Adapter) Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) error {
	_, err := a.modify(ctx, opModify, false, emptyResource, fn, opts)
	return err
}

// ModifyGiven is Modify for a caller that gives emptyResource up (a
// generic controller's output, made for this write): it keeps no
// reference to it once the call returned and never reads or changes it
// again, so that the state may make the copy of the stored output that fn
// changes in emptyResource's storage (see givingIntoModifier). It is not
// part of [controller.Writer]: a controller may keep its emptyResource.
func (a *Adapter) ModifyGiven(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) error {
	_, err := a.modify(ctx, opModify, true, emptyResource, fn, opts)
	return err
}

// ModifyWithResult is Modify returning the output as stored.
func (a *Adapter) ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) (resource.Resource, error) {
	return a.modify(ctx, "ModifyWithResult", false, emptyResource, fn, opts)
}

// opModify is the op of Modify.
const opModify = "Modify"

// givingModifier is a state whose Modify can store the resource fn changed
// as is when fn gives it up (the states state.WrapCore returns: ModifyGiven
// over a core that can keep what it is given, the inmem state's).
type givingModifier interface {
	ModifyGiven(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) error
}

// givingIntoModifier is a givingModifier that can also make the copy fn
// changes in the storage of emptyResource when the caller gives that up
// too (the states state.WrapCore returns: ModifyGivenInto).
type givingIntoModifier interface {
	ModifyGivenInto(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) error
}

// modify is Modify and ModifyWithResult. A call that left the output equal
// (rule S6: the state wrote nothing) is told apart by its version: the
// version of the stored resource that fn last changed is still the
// version after the call (a write would have moved it; a create starts
// from no version). It is traced as such, never as a commit.
func (a *Adapter) modify(ctx context.Context, op string, into bool, emptyResource resource.Resource, fn func(resource.Resource) error, opts []controller.ModifyOption) (res resource.Resource, err error) {
	var (
		target resource.Pointer
		seen   resource.Version
		after  *resource.Metadata
	)
	defer func() {
		if after != nil && seen.Value() != 0 && after.Version().Equal(seen) {
			a.tel.CallUnchanged(telemetry.OpModify, after, a.workerOf(ctx))
			return
		}
		a.tel.WriteEnded(telemetry.OpModify, target, a.workerOf(ctx), err)
	}()
	md, err := a.checkWrite(op, emptyResource)
	if err != nil {
		return nil, err
	}
	target = md
	if fn == nil { // else the gate comes after fn, once fn read what it reads (gatedCall)
		if err := a.gateWrite(ctx, md); err != nil {
			return nil, err
		}
	}
	stOpts := a.opts.modifyDefault
	if len(opts) > 0 {
		stOpts = a.opts.modifyWith(opts)
	}
	apply, m := fn, (*modifyCall)(nil)
	if fn != nil { // a nil fn is the state's to refuse
		m = modifyCalls.Get().(*modifyCall)
		m.fn, apply = fn, m.apply
		if a.gated {
			apply = m.gated(a, ctx, md)
		}
	}
	res, err = a.callModify(ctx, op, into, emptyResource, apply, stOpts)
	var handed resource.Resource
	if m != nil {
		seen, handed = m.seen, m.res
		m.reset(a.gated)
		modifyCalls.Put(m)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case res != nil:
		after = res.Metadata()
	case handed != nil:
		after = handed.Metadata()
	}
	if after != nil {
		target = after
		if seen.Value() == 0 || !after.Version().Equal(seen) {
			a.logCommit(ctx, md, after.Version().Value())
		}
	}
	a.written(ctx, md)
	return res, nil
}

// callModify makes the state's write of modify. A controller's fn keeps
// nothing it is handed (controller.Writer): for op Modify the resource it
// changed may be stored as is, no copy of it (see givingModifier), and it
// is not handed back (res is nil); its metadata, read only, is the stored
// resource's after the write. With into, emptyResource is given up too
// (see ModifyGiven).
func (a *Adapter) callModify(ctx context.Context, op string, into bool, emptyResource resource.Resource, apply func(resource.Resource) error, stOpts []state.UpdateOption) (resource.Resource, error) {
	if op != opModify {
		return a.st.ModifyWithResult(ctx, emptyResource, apply, stOpts...)
	}
	if g, ok := a.st.(givingIntoModifier); ok && into {
		return nil, g.ModifyGivenInto(ctx, emptyResource, apply, stOpts...)
	}
	if g, ok := a.st.(givingModifier); ok {
		return nil, g.ModifyGiven(ctx, emptyResource, apply, stOpts...)
	}
	return nil, a.st.Modify(ctx, emptyResource, apply, stOpts...)
}

// modifyCall wraps the function of one Modify to note the version of the
// resource it was handed. They are pooled, each with its method value bound
// once, so that wrapping fn allocates nothing per call (docs/performance.md,
// "Wrapping a controller's Modify").
type modifyCall struct {
	fn   func(resource.Resource) error
	seen resource.Version
	// res is the resource fn was last handed (the one written).
	res   resource.Resource
	apply func(resource.Resource) error // m.call
	// gatedApply is m.gatedCall once a gated Modify used m; a, ctx and
	// ptr are the adapter, the caller's context and the target of a gated
	// Modify (nil otherwise).
	gatedApply func(resource.Resource) error
	a          *Adapter
	ctx        context.Context
	ptr        resource.Pointer
}

var modifyCalls = sync.Pool{New: func() any {
	m := &modifyCall{}
	m.apply = m.call
	return m
}}

func (m *modifyCall) call(r resource.Resource) error {
	m.seen, m.res = r.Metadata().Version(), r
	return m.fn(r)
}

// gated makes m a gated Modify's (see gatedCall) by a of ptr, called
// with ctx, and returns the function to hand the state.
func (m *modifyCall) gated(a *Adapter, ctx context.Context, ptr resource.Pointer) func(resource.Resource) error {
	if m.gatedApply == nil { // made once per pooled call, when gated
		m.gatedApply = m.gatedCall
	}
	m.a, m.ctx, m.ptr = a, ctx, ptr
	return m.gatedApply
}

// reset clears m to be put back in the pool (gated: a gated Modify's).
func (m *modifyCall) reset(gated bool) {
	m.fn, m.seen, m.res = nil, resource.Version{}, nil
	if gated {
		m.a, m.ctx, m.ptr = nil, nil, nil
	}
}

// gatedCall is call, then the write's gate (sched.GateWrite): the
// scheduler of a gated controller lets the write commit after fn has
// read the state (and the world) it reads, so that a simulator replaying
// a recording can run fn where the recorded pass read and commit where
// it committed, as two steps. fn runs again, and the gate is met again,
// when the state finds the output changed since (a conflict).
func (m *modifyCall) gatedCall(r resource.Resource) error {
	if err := m.call(r); err != nil {
		return err
	}
	return m.a.gateWrite(m.ctx, m.ptr)
}

// written records a write of ptr through the adapter: for output tracking,
// and in the cache of its kind.
func (a *Adapter) written(ctx context.Context, ptr resource.Pointer) {
	a.tracker.record(ptr)
	a.refreshCache(ctx, ptr)
}

// verify asks the state whether the cache c of kind (a cached kind that
// could not serve a read at the controller's floor) lacks no change of
// the kind, so that it may serve the read after all: true when the
// state confirms it. A failure is no confirmation: the read goes to the
// state.
func (a *Adapter) verify(ctx context.Context, c *cache.Kind, kind resource.Kind) bool {
	revs := a.caches.Revisions()
	if revs == nil {
		return false
	}
	last, at, err := revs.KindRevision(ctx, kind)
	if err != nil {
		return false
	}
	c.Verify(last, at)
	return true
}

// wrote raises the floor past a write through the adapter that returned:
// the controller's later reads, of any kind, reflect it (the state's
// newest revision is at least the write's).
func (a *Adapter) wrote(ctx context.Context) {
	revs := a.caches.Revisions()
	if revs == nil {
		return
	}
	if rev, err := revs.Revision(ctx); err == nil {
		a.floor.Raise(rev)
	}
}

// teardownOptions are the state options of a Teardown with the
// controller's options opts.
func (a *Adapter) teardownOptions(opts []controller.RemoveOption) []state.TeardownOption {
	if len(opts) > 0 {
		if owner, ok := deleteOwner(opts); ok {
			return []state.TeardownOption{state.WithTeardownOwner(owner)}
		}
	}
	return a.opts.teardown
}

// destroyOptions are the state options of a Destroy with the controller's
// options opts.
func (a *Adapter) destroyOptions(opts []controller.RemoveOption) []state.DestroyOption {
	if len(opts) > 0 {
		if owner, ok := deleteOwner(opts); ok {
			return []state.DestroyOption{state.WithDestroyOwner(owner)}
		}
	}
	return a.opts.destroy
}

// Teardown tears down a declared output owned by the controller (or by
// the owner of [controller.WithOwner]).
func (a *Adapter) Teardown(ctx context.Context, ptr resource.Pointer, opts ...controller.RemoveOption) (ready bool, err error) {
	var committed resource.Version
	defer func() { a.tel.CallCommitted(telemetry.OpTeardown, ptr, committed, a.workerOf(ctx), err) }()
	if err := resource.ValidatePointer(ptr); err != nil {
		return false, err
	}
	if err := a.checkOutput("Teardown", ptr); err != nil {
		return false, err
	}
	if err := a.gateWrite(ctx, ptr); err != nil {
		return false, err
	}
	ready, committed, err = committer(a.st).TeardownCommitted(ctx, ptr, a.teardownOptions(opts)...)
	if err != nil {
		return false, err
	}
	a.logCommit(ctx, ptr, committed.Value())
	if !ready {
		a.tel.TeardownPending(ptr, a.workerOf(ctx))
	}
	a.refreshCache(ctx, ptr)
	return ready, nil
}

// Destroy destroys a declared output owned by the controller (or by the
// owner of [controller.WithOwner]).
func (a *Adapter) Destroy(ctx context.Context, ptr resource.Pointer, opts ...controller.RemoveOption) (err error) {
	var destroyed resource.Version
	defer func() { a.tel.CallCommitted(telemetry.OpDestroy, ptr, destroyed, a.workerOf(ctx), err) }()
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	if err := a.checkOutput("Destroy", ptr); err != nil {
		return err
	}
	if err := a.gateWrite(ctx, ptr); err != nil {
		return err
	}
	if destroyed, err = committer(a.st).DestroyCommitted(ctx, ptr, a.destroyOptions(opts)...); err != nil {
		return err
	}
	a.logCommit(ctx, ptr, destroyed.Value())
	a.wrote(ctx)
	if c := a.caches.Get(resource.KindOf(ptr)); !c.Numbered() {
		c.PutDestroyed(ptr)
	}
	return nil
}

// AddFinalizer adds finalizers to a strong input, a primary input or an
// own output (rule C5).
func (a *Adapter) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (err error) {
	var committed resource.Version
	defer func() { a.tel.CallCommitted(telemetry.OpAddFinalizer, ptr, committed, a.workerOf(ctx), err) }()
	if err := a.checkFinalizers(ctx, "AddFinalizer", ptr); err != nil {
		return err
	}
	if err := a.gateWrite(ctx, ptr); err != nil {
		return err
	}
	if committed, err = committer(a.st).AddFinalizerCommitted(ctx, ptr, fins...); err != nil {
		return err
	}
	a.logCommit(ctx, ptr, committed.Value())
	a.refreshCache(ctx, ptr)
	return nil
}

// RemoveFinalizer removes finalizers from a strong input, a primary input
// or an own output (rule C5).
func (a *Adapter) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) (err error) {
	var committed resource.Version
	defer func() { a.tel.CallCommitted(telemetry.OpRemoveFinalizer, ptr, committed, a.workerOf(ctx), err) }()
	if err := a.checkFinalizers(ctx, "RemoveFinalizer", ptr); err != nil {
		return err
	}
	if err := a.gateWrite(ctx, ptr); err != nil {
		return err
	}
	if committed, err = committer(a.st).RemoveFinalizerCommitted(ctx, ptr, fins...); err != nil {
		return err
	}
	a.logCommit(ctx, ptr, committed.Value())
	a.refreshCache(ctx, ptr)
	return nil
}

// checkFinalizers allows finalizer changes on strong and primary inputs,
// and on resources of an output type that the controller owns (rule C5).
func (a *Adapter) checkFinalizers(ctx context.Context, op string, ptr resource.Pointer) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return err
	}
	acc := a.access.Load()
	if acc.finalizerInput(ptr) {
		return nil
	}
	if !acc.isOutput(ptr.Type()) {
		return a.deny(op, resource.PointerString(ptr), "not a strong input, a primary input or an own output")
	}
	cur, err := a.st.Get(ctx, ptr, state.WithReadOnlyGet())
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
// write through the Runtime, so that the controller reads its write (or a
// later one) at once. It reads the state's shared snapshot: never the
// caller's resource, which the caller may go on changing, and no copy.
//
// Over a state that numbers its changes it only raises the floor: reads
// are then served by revision, and a cache behind the write is not read.
func (a *Adapter) refreshCache(ctx context.Context, ptr resource.Pointer) {
	a.wrote(ctx)
	c := a.caches.Get(resource.KindOf(ptr))
	if c == nil || c.Numbered() {
		return
	}
	cur, err := a.st.Get(ctx, ptr, state.WithReadOnlyGet())
	switch {
	case err == nil:
		c.PutWritten(cur)
	case state.IsNotFoundError(err):
		c.PutDestroyed(ptr)
	}
}

// checkListOptions refuses list options that no List can apply (a label
// query with an unusable term, rule S15) before the cache or the state is
// read: the cache serves a List without the state's own check.
func checkListOptions(kind resource.Kind, opts []state.ListOption) error {
	if len(opts) == 0 {
		return nil
	}
	var o state.ListOptions
	opt.Apply(&o, opts)
	return o.Validate(kind)
}
