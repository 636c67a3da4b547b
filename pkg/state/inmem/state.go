package inmem

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/internal/plaincopy"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// NewState returns an empty in-memory state that serves every namespace.
// It starts no goroutine; each watch runs one goroutine until its context
// is canceled.
func NewState(opts ...Option) state.State {
	return state.WrapCore(newCore(opts...))
}

// core implements [state.CoreState]. Each kind (namespace and type) has its
// own [kindStore] with its own lock, so writers of one kind never wait for
// another kind.
type core struct {
	// KindWatches is WatchKind and WatchKindAggregated, shared with the
	// etcd state; its Start is startKindWatch.
	backend.KindWatches
	// kinds finds a kind's store (see kindTable). A table is never
	// modified once published: adding a kind publishes a new one (under
	// kindsMu), so the hot path reads it with one atomic load and no lock.
	kinds atomic.Pointer[kindTable]

	// rev is the revision of the newest change, of any kind: a write
	// takes the next one holding its kind's lock, never a lock of its own
	// (see [state.RevisionReporter]).
	rev atomic.Uint64

	kindsMu    sync.Mutex // serializes adding kinds; guards nextKindID
	nextKindID uint64

	// plainOf is the [plaincopy.ForType] of the first type of resource
	// the state stored plainly (nil until then), which a write of a
	// resource of that type validates and copies it with (see typeCopy).
	// Set once, by a kind's storedOf.
	plainOf atomic.Pointer[plaincopy.Func]

	// guardEvery is the guard's sample (see everyOf); trackSizes makes
	// every kind track sizes from the start (see slot.go).
	guardEvery uint64
	trackSizes bool

	clock      *clock
	stateID    uint64 // identifies this state in bookmarks
	historyCap int
	// historyBytes is the byte budget of each kind's history.
	historyBytes int64
	// report is the report of the mutation detector or of the guard; nil
	// when both are off. guard tells the guard's (see guard.go), whose
	// own report (WithMutationReport) is ownReport and whose subscribers
	// are subs.
	report    func(error)
	guard     bool
	ownReport func(error)
	subs      mutationSubs

	// persist is the persistence hook (see persist.go); nil when the
	// state is not persistent.
	persist Persistence
	// persistent tells that stateID is a lineage and a run (see
	// [Restored]).
	persistent bool
	// createdFloor is the creation time every kind's creation times
	// follow (zero when not persistent).
	createdFloor time.Time
}

var _ state.CoreState = (*core)(nil)

func newCore(opts ...Option) *core {
	o := defaultOptions()
	opt.Apply(&o, opts)
	c := &core{clock: newClock(), stateID: rand.Uint64(), historyCap: o.historyCapacity, historyBytes: o.historyBytes, guardEvery: o.guardEvery, trackSizes: o.trackSizes}
	c.KindWatches = backend.KindWatches{Start: c.startKindWatch}
	switch {
	case o.detect:
		c.report = o.report
		if c.report == nil {
			c.report = panicReport
		}
	case o.guard:
		c.guard, c.ownReport = true, o.report
		c.report = c.guardReport
	}
	c.kinds.Store(newKindTable(nil))
	if o.persist != nil {
		c.restore(o.persist)
	}
	return c
}

// The options values that Create, Update, Destroy and Get apply their
// options to (see opt.ApplyPooled): a write or a read with options
// allocates no options value.
var (
	createOptions  opt.Pool[state.CreateOptions]
	updateOptions  opt.Pool[state.UpdateOptions]
	destroyOptions opt.Pool[state.DestroyOptions]
	getOptions     opt.Pool[state.GetOptions]
)

// Get implements [state.CoreState]: a private copy of the stored resource,
// or with [state.WithReadOnlyGet] the shared snapshot itself (rule S7).
func (c *core) Get(_ context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	var o state.GetOptions
	if len(opts) > 0 { // ApplyPooled is a call, which a Get without options skips
		o = opt.ApplyPooled(&getOptions, o, opts)
	}
	return c.get(ptr, o)
}

// GetReadOnly is Get with [state.WithReadOnlyGet] and no other option,
// without applying options (see the state package's readOnlyGetter).
func (c *core) GetReadOnly(_ context.Context, ptr resource.Pointer) (resource.Resource, error) {
	return c.get(ptr, state.GetOptions{ReadOnly: true})
}

// get is Get with the options o.
func (c *core) get(ptr resource.Pointer, o state.GetOptions) (resource.Resource, error) {
	ns, typ, id, ok := keyOf(ptr)
	var ks *kindStore
	if ok {
		ks = c.lookupNames(ns, typ)
	}
	if ks == nil {
		// Not a PointerKey with its three parts set, or a kind that
		// lookupNames may miss: by the key (which validates ptr).
		p, err := key(ptr)
		if err != nil {
			return nil, err
		}
		if ks = c.lookup(p.Kind()); ks == nil {
			if o.Revision != nil {
				*o.Revision = c.rev.Load()
			}
			return nil, state.NewNotFoundError(p, "not found")
		}
		id = p.ID()
	}
	ks.mu.Lock()
	r := ks.bare(ks.items[id])
	plain := !ks.userCopies
	if o.Revision != nil {
		*o.Revision = c.rev.Load()
	}
	ks.mu.Unlock()
	switch {
	case r == nil:
		return nil, state.NewNotFoundError(resource.PointerOf(ptr), "not found")
	case o.ReadOnly:
		return r, nil
	case plain:
		return r.DeepCopy(), nil // no user code (see kindStore.userCopies)
	}
	return state.DeepCopyOf(r)
}

// List implements [state.CoreState]: the matching resources, sorted by ID,
// as private copies, or with [state.WithReadOnlyList] as the shared
// snapshots themselves (rule S7).
func (c *core) List(_ context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	k, o, err := backend.ListArgs(kind, opts)
	if err != nil {
		return resource.List{}, err
	}
	ks := c.lookup(k)
	if ks == nil {
		if o.Revision != nil {
			*o.Revision = c.rev.Load()
		}
		return resource.List{}, nil
	}
	items := ks.snapshot(nil, o.Revision)
	if backend.Filtered(o.LabelQueries, o.IDQuery) {
		kept := items[:0]
		for _, r := range items {
			if backend.Matches(r, o.LabelQueries, o.IDQuery) {
				kept = append(kept, r)
			}
		}
		clear(items[len(kept):])
		items = kept
	}
	return state.ListOf(items, o.ReadOnly)
}

// Create implements [state.CoreState] (rule S1).
func (c *core) Create(_ context.Context, r resource.Resource, opts ...state.CreateOption) error {
	return c.create(r, false, opt.ApplyPooled(&createOptions, state.CreateOptions{}, opts))
}

// CreateOwned is Create with the options o, storing r itself instead of
// a copy: the caller gives r up (see the state package's ownedUpdater).
func (c *core) CreateOwned(_ context.Context, r resource.Resource, o state.CreateOptions) error {
	return c.create(r, true, o)
}

// create is Create with the options o, storing r itself when owned.
func (c *core) create(r resource.Resource, owned bool, o state.CreateOptions) error {
	md, stored, smd, size, plain := c.typeCopy(r, owned)
	var err error
	if !plain {
		if md, err = state.ValidateResource(r); err != nil {
			return err
		}
	}
	ns, typ, _ := md.Identity()
	ks := c.lookupNames(ns, typ) // nil: a kind to add once r is copied
	if !plain {
		if stored, smd, size, plain, err = ks.storedOf(r, md, owned); err != nil {
			return err
		}
	}
	now, at := c.clock.now()
	stampCreate(smd, o.Owner)
	_, _, id := smd.Identity()
	if ks == nil {
		ks = c.store(resource.KindOf(smd))
	}
	ref, err := ks.det.referenceCopy(r)
	if err != nil {
		return err
	}
	ks.mu.Lock()
	if _, exists := ks.items[id]; exists {
		ks.mu.Unlock()
		return state.NewConflictError(resource.PointerOf(md), "already exists")
	}
	created := at // now's UnixNano
	if created <= ks.lastCreated {
		created = ks.lastCreated + 1
		now = time.Unix(0, created)
	}
	smd.SetCreated(now)
	smd.SetUpdated(now)
	var pend Pending
	if c.persist != nil { // checked here: a write of a state that does not persist makes no call
		if pend, err = c.persistLocked(ks, id, stored); err != nil {
			ks.mu.Unlock()
			return err
		}
	}
	ks.lastCreated = created
	ks.order.created(id)
	ks.count.Add(1)
	wake := ks.commitLocked(id, nil, stored, smd, ref, size, plain, at)
	if err := ks.publishUnlock(wake, pend); err != nil {
		return err
	}
	giveStamps(md, smd, owned)
	return nil
}

// Update implements [state.CoreState] (rule S2).
func (c *core) Update(_ context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	return c.update(r, false, opt.ApplyPooled(&updateOptions, state.UpdateOptions{ExpectedPhase: &phaseRunning}, opts))
}

// UpdateOwned is Update with the options o, storing r itself instead of
// a copy: the caller gives r up (see the state package's ownedUpdater).
func (c *core) UpdateOwned(_ context.Context, r resource.Resource, o state.UpdateOptions) error {
	return c.update(r, true, o)
}

// update is Update with the options o, storing r itself when owned.
func (c *core) update(r resource.Resource, owned bool, o state.UpdateOptions) error {
	md, stored, smd, size, plain := c.typeCopy(r, owned)
	var err error
	if !plain {
		if md, err = state.ValidateResource(r); err != nil {
			return err
		}
	}
	ns, typ, id := md.Identity()
	ks := c.lookupNames(ns, typ)
	if ks == nil {
		if ks = c.lookup(resource.KindOf(md)); ks == nil {
			return state.NewNotFoundError(resource.PointerOf(md), "not found")
		}
	}
	if c.persist != nil && ks.det != nil {
		if err := ks.checkPersisted(id); err != nil {
			return err
		}
	}
	if !plain {
		if stored, smd, size, plain, err = ks.storedOf(r, md, owned); err != nil {
			return err
		}
	}
	ref, err := ks.det.referenceCopy(r)
	if err != nil {
		return err
	}
	now, at := c.clock.now()

	ks.mu.Lock()
	curItem := ks.items[id]
	cmd, err := checkUpdate(md, ks.bare(curItem), o)
	if err != nil {
		ks.mu.Unlock()
		return err
	}
	stampUpdate(smd, cmd, now)
	var pend Pending
	if c.persist != nil { // checked here: a write of a state that does not persist makes no call
		if pend, err = c.persistLocked(ks, id, stored); err != nil {
			ks.mu.Unlock()
			return err
		}
	}
	ks.updatedLocked(id)
	wake := ks.commitLocked(id, curItem, stored, smd, ref, size, plain, at)
	if err := ks.publishUnlock(wake, pend); err != nil {
		return err
	}
	giveStamps(md, smd, owned)
	return nil
}

// giveStamps ends a write of a resource of metadata md, stored as a
// version of metadata smd: a copy's stamps (version, creation and update
// times) go back to md. Owned, md is the stored metadata itself, stamped
// already: published, it is read by others from now on. smd, published,
// no longer changes.
func giveStamps(md, smd *resource.Metadata, owned bool) {
	if !owned {
		md.CopyStamps(smd)
	}
}

// typeCopy is the start of a write of r when r is of the type the state
// stored plainly first (see core.plainOf): r's metadata, which passes
// [state.ValidateResource] (whose checks of the metadata it makes, on the
// copy's, which is r's as it is), and what storedOf gives for r (the
// version to store, its metadata and its size), with ok; without
// finding r's type and copy plan, nor r's kind, first. For any other r it
// reports false: the write then validates and copies r as any other.
func (c *core) typeCopy(r resource.Resource, owned bool) (md *resource.Metadata, stored resource.Resource, smd *resource.Metadata, size int64, ok bool) {
	of := c.plainOf.Load()
	if of == nil {
		return nil, nil, nil, 0, false
	}
	stored, smd, n, ok := (*of)(r, owned)
	if !ok {
		return nil, nil, nil, 0, false
	}
	ns, typ, id := smd.Identity()
	if _, p, _ := smd.Head(); ns == "" || typ == "" || id == "" || p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return nil, nil, nil, 0, false // ValidateResource says what
	}
	return r.Metadata(), stored, smd, int64(n), true
}

// commitLocked commits a write of id: stored, a version of the estimated
// size whose metadata smd the write stamped, copied without user code or not
// (plain), with ref its reference copy (nil when the detector does not
// watch it), replaces the entry cur of items (nil when absent). It freezes
// stored, stores its entry, stamps ref alike and appends the change to the
// history, at the time at (UnixNano); it returns the parked kind watchers
// to wake (see appendLocked). The caller holds mu.
func (ks *kindStore) commitLocked(id resource.ID, cur unsafe.Pointer, stored resource.Resource, smd *resource.Metadata, ref resource.Resource, size int64, plain bool, at int64) *wakeGroup {
	watched := ref != nil
	if watched {
		smd.Unshare() // see freeze
	}
	smd.Freeze()
	e := ks.bareLocked(stored, size, watched, plain)
	if e == nil {
		e = ks.itemLocked(stored, size, watched, plain)
	}
	ks.items[id] = e
	stampLike(ref, smd)
	return ks.appendLocked(id, cur, stored, ref, at)
}

// stampCreate stamps smd, the metadata of a resource to create: the
// first version, running, owned by owner.
func stampCreate(smd *resource.Metadata, owner resource.Owner) {
	smd.SetVersion(resource.VersionUndefined.Next())
	smd.SetPhase(resource.PhaseRunning)
	smd.ReplaceOwner(owner) // copies nothing when it is the owner already
}

// stampUpdate stamps smd, the metadata of the version that replaces the
// stored one of metadata cmd: the next version, cmd's owner and creation
// time, updated now. It reads cmd in place (Head, CopyStamps).
func stampUpdate(smd, cmd *resource.Metadata, now time.Time) {
	ver, _, owner := cmd.Head()
	smd.CopyStamps(cmd) // the creation time; the version and update time follow
	smd.SetVersion(ver.Next())
	smd.ReplaceOwner(owner) // copies nothing when it is the owner already
	smd.SetUpdated(now)
}

// storedOf returns the version of r (whose metadata is md) to store, its
// metadata and its estimated size (see sizeOf): a copy of r (see copyOf),
// or r itself when owned. A resource whose DeepCopy and ApproxSize run no
// user code ([usercode.CopiesPlainly]) is copied and sized as it is, in
// one call ([plaincopy.Of]), and plain tells that the version stored is
// such a resource too (a copy of one is of its type); for any other, they
// are user code and run under one deferred recover (see storedOfUser).
//
// A kind store (ks, when not nil) keeps the [plaincopy.ForType] of the
// first type it stored plainly (see kindStore.plainOf) and copies each
// resource of that type with it, without finding its type and copy plan
// again; for any other resource, and before ks exists, storedOf falls
// back to plaincopy.Of (see storedOfAny).
func (ks *kindStore) storedOf(r resource.Resource, md *resource.Metadata, owned bool) (stored resource.Resource, smd *resource.Metadata, size int64, plain bool, err error) {
	if ks != nil {
		if of := ks.plainOf.Load(); of != nil {
			if stored, smd, n, ok := (*of)(r, owned); ok {
				return stored, smd, int64(n), true, nil
			}
		}
	}
	return ks.storedOfAny(r, md, owned)
}

// storedOfAny is storedOf of a resource that ks (nil: none yet) has no
// plainOf for: by plaincopy.Of, and once ks has a plainOf, storedOf
// takes it (the first type stored plainly keeps it).
func (ks *kindStore) storedOfAny(r resource.Resource, md *resource.Metadata, owned bool) (stored resource.Resource, smd *resource.Metadata, size int64, plain bool, err error) {
	if stored, smd, n, ok := plaincopy.Of(r, owned); ok {
		if ks != nil && ks.plainOf.Load() == nil {
			if of, ok := plaincopy.ForType(r); ok {
				ks.plainOf.CompareAndSwap(nil, &of)
				if ks.statePlainOf != nil {
					ks.statePlainOf.CompareAndSwap(nil, &of)
				}
			}
		}
		return stored, smd, int64(n), true, nil
	}
	stored, smd, size, err = storedOfUser(r, md, owned)
	return stored, smd, size, false, err
}

// storedOfUser is storedOf of a resource whose DeepCopy and ApproxSize are
// user code: they run under one deferred recover (each recover costs a
// write about as much as a map lookup). When either panics, or the copy
// is not a resource of r's identity, the write takes copyOf and sizeOf
// instead, which run them again with a recover each and give their error
// or default size.
func storedOfUser(r resource.Resource, md *resource.Metadata, owned bool) (stored resource.Resource, smd *resource.Metadata, size int64, err error) {
	defer func() {
		if recover() != nil {
			stored, smd, size, err = storedOfSlow(r, md, owned)
		}
	}()
	stored, smd = r, md
	if !owned {
		// A typed-nil copy panics in Metadata, which takes the slow path.
		if stored = r.DeepCopy(); stored == nil || stored.Metadata() == nil {
			return storedOfSlow(r, md, owned)
		}
		smd = stored.Metadata()
		ns, typ, id := md.Identity()
		if cns, ctyp, cid := smd.Identity(); cid != id || ctyp != typ || cns != ns {
			return storedOfSlow(r, md, owned)
		}
	}
	if s, ok := stored.(interface{ ApproxSize() int }); ok {
		return stored, smd, int64(s.ApproxSize()), nil
	}
	return stored, smd, defaultResourceSize, nil
}

// storedOfSlow is storedOf with a recover for each user call: copyOf and
// sizeOf.
func storedOfSlow(r resource.Resource, md *resource.Metadata, owned bool) (resource.Resource, *resource.Metadata, int64, error) {
	stored, smd := r, md
	if !owned {
		var err error
		if stored, smd, err = copyOf(r, md); err != nil {
			return nil, nil, 0, err
		}
	}
	return stored, smd, sizeOf(stored), nil
}

// copyOf returns the copy of r to store and its metadata, or an invalid
// error when r cannot be copied (see [state.DeepCopyOf]) or its copy has
// another identity.
func copyOf(r resource.Resource, md *resource.Metadata) (resource.Resource, *resource.Metadata, error) {
	c, err := state.DeepCopyOf(r)
	if err != nil {
		return nil, nil, err
	}
	cmd := c.Metadata()
	// Identity reads in place: a getter of Metadata (a value receiver)
	// called through a pointer copies the whole metadata first.
	ns, typ, id := md.Identity()
	if cns, ctyp, cid := cmd.Identity(); cid != id || ctyp != typ || cns != ns {
		return nil, nil, state.NewInvalidError(resource.PointerOf(md), "DeepCopy of %T changed the identity to %s", r, resource.PointerString(cmd))
	}
	return c, cmd, nil
}

// phaseRunning is the default expected phase of Update; options copy the
// pointer, never write through it.
var phaseRunning = resource.PhaseRunning

// checkUpdate returns the metadata of cur, the stored version (nil when
// absent), or why md may not replace it.
func checkUpdate(md *resource.Metadata, cur resource.Resource, o state.UpdateOptions) (*resource.Metadata, error) {
	if cur == nil {
		return nil, state.NewNotFoundError(resource.PointerOf(md), "not found")
	}
	cmd := cur.Metadata()
	if cmd == md {
		// The stored snapshot itself (from a watch event or a read-only
		// Get or List): its metadata is the snapshot's own.
		return nil, state.NewInvalidError(resource.PointerOf(md), "update of the shared read-only snapshot itself: DeepCopy it and update the copy (rule S7)")
	}
	return cmd, backend.CheckUpdate(md, cmd, o)
}

// Destroy implements [state.CoreState] (rule S3).
func (c *core) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	_, err := c.DestroyVersion(ctx, ptr, opts...)
	return err
}

// DestroyVersion is Destroy returning the version it destroyed (see
// [state.CommitReporter]).
func (c *core) DestroyVersion(_ context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	p, err := key(ptr)
	if err != nil {
		return resource.VersionUndefined, err
	}
	id := p.ID()
	o := opt.ApplyPooled(&destroyOptions, state.DestroyOptions{}, opts)
	ks := c.lookup(p.Kind())
	if ks == nil {
		return resource.VersionUndefined, state.NewNotFoundError(p, "not found")
	}
	_, at := c.clock.now()
	ks.mu.Lock()
	curItem := ks.items[id]
	cur := ks.bare(curItem)
	switch {
	case cur == nil:
		err = state.NewNotFoundError(p, "not found")
	case cur.Metadata().Owner() != o.Owner:
		err = state.NewOwnerConflictError(p, "owner is %q, not %q", cur.Metadata().Owner(), o.Owner)
	case !cur.Metadata().Finalizers().Empty():
		err = state.NewPendingFinalizersError(p, "finalizers pending: %v", slices.Clone(*cur.Metadata().Finalizers()))
	}
	var pend Pending
	if err == nil && c.persist != nil {
		pend, err = c.persist.Append(p.Namespace(), p.Type(), id, nil)
	}
	if err != nil {
		ks.mu.Unlock()
		return resource.VersionUndefined, err
	}
	delete(ks.items, id)
	ks.order.destroyed()
	ks.dropViewLocked()
	ks.count.Add(-1)
	ver := cur.Metadata().Version()
	wake := ks.appendLocked(id, curItem, nil, nil, at)
	return ver, ks.publishUnlock(wake, pend)
}

// persistLocked appends the write of r (nil: a destroy) of id to the
// persistence of a persistent state, and returns what to wait for once
// the write is published. The caller holds ks.mu.
func (c *core) persistLocked(ks *kindStore, id resource.ID, r resource.Resource) (Pending, error) {
	return c.persist.Append(ks.ns, ks.typ, id, r)
}

// publishUnlock ends a write that holds mu: it releases mu, wakes the
// parked watchers, runs the mutation detector's checks and waits for the
// write's persistence (pend may be nil).
func (ks *kindStore) publishUnlock(wake *wakeGroup, pend Pending) error {
	if ks.det != nil && ks.det.hasPendingLocked() {
		ks.checkUnlock(wake)
	} else {
		ks.mu.Unlock()
		wakeUp(wake)
	}
	if pend != nil {
		return pend.Wait()
	}
	return nil
}

// checkUnlock is publishUnlock's release of mu and wake-up when the
// mutation detector has checks to run: it takes them, releases mu, wakes
// the parked watchers and runs them. Apart, so that a write without checks
// does not clear their buffer.
func (ks *kindStore) checkUnlock(wake *wakeGroup) {
	var buf [4]check
	checks := ks.det.takeLocked(buf[:0])
	ks.mu.Unlock()
	wakeUp(wake)
	ks.det.verify(ks, checks)
}
