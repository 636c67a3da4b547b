package inmem

import (
	"log"
	"sync"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The production guard (rule S7) is the mutation detector on a sample of
// the versions: a kind keeps a reference copy of the first of every
// guardSample writes (every write of a persistent state), checked as the
// detector checks its own; the others cost a counter increment. It tracks
// no holders (state.SnapshotTracker reports it tracks nothing): a change
// it finds goes to the report the state was given, else to the readers
// subscribed to its findings ([state.MutationNotifier]: the Runtime, which
// names the controllers it handed the version to), else to the standard
// logger. A persistent state checks the version a write replaces before
// the write reaches its Persistence (checkPersisted), whether the guard
// or the detector watches it.

// guardSample is how many writes of a kind there are per version the
// guard keeps a reference copy of (a state that is not persistent).
const guardSample = 128

// everyOf returns how many writes there are per reference copy in a kind
// of c (0: no check at all).
func (c *core) everyOf() uint64 {
	switch {
	case c.report == nil:
		return 0
	case c.guard && !c.persistent:
		return c.guardEvery
	}
	return 1
}

// mutationSubs are the functions subscribed to the guard's findings.
type mutationSubs struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(resource.Pointer, resource.Version, error)
}

// NotifyMutations implements [state.MutationNotifier]: fn is called with
// every change the guard finds, unless the state was given a report of
// its own ([WithMutationReport]); the detector's findings go to its holders
// and report as before.
func (c *core) NotifyMutations(fn func(snapshot resource.Pointer, version resource.Version, err error)) (stop func()) {
	if fn == nil || !c.guard {
		return func() {}
	}
	c.subs.mu.Lock()
	defer c.subs.mu.Unlock()
	if c.subs.fns == nil {
		c.subs.fns = map[int]func(resource.Pointer, resource.Version, error){}
	}
	id := c.subs.next
	c.subs.next++
	c.subs.fns[id] = fn
	return func() {
		c.subs.mu.Lock()
		delete(c.subs.fns, id)
		c.subs.mu.Unlock()
	}
}

// guardReport is the guard's report: the state's own report when it was
// given one, else every subscriber, else the standard logger.
func (c *core) guardReport(err error) {
	if c.ownReport != nil {
		c.ownReport(err)
		return
	}
	me, _ := err.(*MutationError)
	c.subs.mu.Lock()
	fns := make([]func(resource.Pointer, resource.Version, error), 0, len(c.subs.fns))
	for _, fn := range c.subs.fns {
		fns = append(fns, fn)
	}
	c.subs.mu.Unlock()
	if len(fns) == 0 || me == nil {
		log.Printf("ERROR %v", err)
		return
	}
	for _, fn := range fns {
		fn(me.Resource, me.Version, err)
	}
}

// checkPersisted is the check of a persistent state before a write of id
// reaches its Persistence: the version it replaces, when the detector or
// the guard watches it, is compared with its reference copy (without the
// kind's lock). A version changed in place is reported, and replaced in
// the store by a copy of its reference copy (the same version, as it was
// written), and the write is refused with a version conflict, nothing
// written: a write that copied the changed version (a finalizer edit, a
// Modify) reads the version restored when it retries, so a change made in
// place is never persisted.
func (ks *kindStore) checkPersisted(id resource.ID) error {
	ks.mu.Lock()
	cur := ks.bare(ks.items[id])
	var ref resource.Resource
	if c := ks.det.cur[id]; c != nil && cur != nil {
		ref = c.ref
	}
	ks.mu.Unlock()
	if ref == nil {
		return nil
	}
	err := compareSnapshot(cur, ref)
	if err == nil {
		return nil
	}
	restored, cerr := state.DeepCopyOf(ref)
	if cerr != nil {
		return cerr
	}
	freeze(restored.Metadata(), true) // watched still: ref is its reference copy
	ks.mu.Lock()
	if it := ks.items[id]; ks.bare(it) == cur {
		ks.items[id] = ks.itemLocked(restored, ks.sizeLocked(it), true, usercode.CopiesPlainly(restored))
		ks.updatedLocked(id) // a List's view holds cur
	}
	ks.mu.Unlock()
	if first, holders := ks.det.found(cur, false); first {
		ks.det.raise(err, holders)
	}
	md := cur.Metadata()
	return state.NewConflictError(resource.PointerOf(md), "version %s was changed in place (a shared read-only snapshot, rule S7): it was restored as written and nothing was written; read it again", md.Version())
}
