// Package cache is the Runtime's in-memory copy of the kinds named by
// runtime.WithCachedResource: each kind's resources as its watch delivers
// them. Until the kind's first bootstrap, reads go to the state.
//
// Over a state that numbers its changes (state.RevisionReporter; see
// [Set.WithRevisions]) the cache knows the revision its contents are at:
// the watch applies each batch of events at once ([Kind.ApplyBatch]) with
// the revision of its newest event, so that between batches the cache
// holds the kind's resources of the state at that revision exactly. A read
// says which revision it needs (a controller's [Floor]: its own writes and
// the changes routed to it); the cache serves it when it is at that
// revision or later, or when the state confirmed that the kind has no
// change the cache lacks ([Kind.Verify]); otherwise the read goes to the
// state. Every read reports the revision it reflects. The Runtime's writes
// then need no overlay.
//
// Over a state that does not number its changes, the cache keeps the
// Runtime's own writes until the watch catches up with them, so that a
// controller reading from the cache always reads its own writes and never
// sees a resource go back to an older version: every write through a
// controller's adapter records the state's snapshot of the written
// resource, with the version the state returned, in an overlay that a
// watch event replaces only once it is at or past that write (versions
// grow within one generation of an ID; generations are told apart by their
// creation time).
//
// The cache holds the state's shared snapshots (from the watch, and from
// read-only Gets after the Runtime's writes), never a resource a controller
// may change: reads hand out copies, or the snapshots themselves when asked
// for read-only (rule S7). A resource's methods are user code: they never
// run under a cache lock (copies and label filtering happen after it is
// released; the watch hands in each resource's metadata, read once).
//
// A kind may have custom indexes (index.go), kept exact by a hook: every
// path that changes an ID's base or overlay entry computes the entry's index
// keys before taking the lock and calls reindexLocked(id) under it.
package cache

import (
	"maps"
	"slices"
	"sync"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Set holds the caches of the cached kinds. It is built once and never
// changes, so it is read without a lock; a nil *Set caches nothing.
type Set struct {
	byKey map[resource.KindKey]*Kind
	// revs is the state's revision reporter; nil when the state does
	// not number its changes.
	revs state.RevisionReporter
}

// WithRevisions tells cs that the state numbers its changes (revs is its
// reporter; nil: it does not), so that its kinds serve reads by revision.
// It is called once, before the caches are used (before the goroutines
// that read them start), and returns cs.
func (cs *Set) WithRevisions(revs state.RevisionReporter) *Set {
	if cs == nil || revs == nil {
		return cs
	}
	cs.revs = revs
	for _, c := range cs.byKey {
		c.numbered = true
	}
	return cs
}

// Revisions returns the state's revision reporter when some kind is
// cached and the state numbers its changes, nil otherwise: readers then
// need no [Floor].
func (cs *Set) Revisions() state.RevisionReporter {
	if cs == nil || len(cs.byKey) == 0 {
		return nil
	}
	return cs.revs
}

// NewSet returns the caches of kinds, empty and not ready.
func NewSet(kinds []resource.Kind) *Set {
	cs := &Set{byKey: map[resource.KindKey]*Kind{}}
	for _, k := range kinds {
		cs.byKey[resource.KindOf(k)] = &Kind{
			base:    map[resource.ID]baseEntry{},
			overlay: map[resource.ID]overlayEntry{},
		}
	}
	return cs
}

// Get returns the cache of k, nil when k is not cached.
func (cs *Set) Get(k resource.KindKey) *Kind {
	if cs == nil {
		return nil
	}
	return cs.byKey[k]
}

// Keys returns the cached kinds, sorted.
func (cs *Set) Keys() []resource.KindKey {
	if cs == nil {
		return nil
	}
	return slices.SortedFunc(maps.Keys(cs.byKey), resource.KindKey.Compare)
}

// overlayEntry is a write made through a controller runtime that the kind's
// watch has not delivered yet: the resource as written, or (res == nil) its
// destruction. gen is the resource's creation time (UnixNano), which tells
// generations of one ID apart; 0 when unknown.
type overlayEntry struct {
	res     resource.Resource
	keys    *keySet // res's index keys (index.go); nil without indexes
	gen     int64
	version uint64
}

// baseEntry is a resource as the kind's watch delivered it, with its
// metadata read once by the watcher: a resource's methods are user code,
// which never runs under mu (DeepCopy for reads runs after mu is released).
type baseEntry struct {
	res  resource.Resource
	md   *resource.Metadata
	keys *keySet // res's index keys (index.go); nil without indexes
}

// Kind is the in-memory copy of one kind. base follows the kind's watch;
// overlay holds the Runtime's own writes until the watch catches up with
// them (read your writes). Its methods are safe for concurrent use, and do
// nothing (or report not ready) on a nil *Kind, which stands for a kind
// that is not cached.
type Kind struct {
	// numbered tells that the state numbers its changes: reads are served
	// by revision, and the Runtime's writes leave the overlay empty. Set
	// before the kind is used.
	numbered bool

	mu sync.RWMutex
	// ready is set once the watch delivered its first bootstrap; until
	// then reads go to the state. Protected by mu.
	ready bool
	// applied is the revision of the state whose resources of the kind
	// base holds (numbered only), unless settling. Protected by mu.
	applied uint64
	// verified is a revision at which the state confirmed that the kind
	// had no change after applied (see Verify): the contents are those of
	// the state at max(applied, verified). Protected by mu.
	verified uint64
	// settling is set while base is not the kind at one revision: a
	// re-list's changes are being applied. Protected by mu.
	settling bool
	// base is the watch's view; protected by mu.
	base map[resource.ID]baseEntry
	// overlay holds writes not yet seen by the watch; protected by mu.
	overlay map[resource.ID]overlayEntry
	// ix are the kind's custom indexes (index.go), nil without any.
	ix *indexes
}

func genOf(md *resource.Metadata) int64 {
	if md.Created().IsZero() {
		return 0
	}
	return md.Created().UnixNano()
}

// Ready reports whether reads may be served from c; false on a nil c.
func (c *Kind) Ready() bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.ready
}

// MarkReady is called when the watch bootstrapped.
func (c *Kind) MarkReady() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.ready = true
	c.mu.Unlock()
}

// Apply applies a watch event (Created, Updated or Destroyed) of the
// resource whose metadata is md to the base, and drops the overlay entry of
// the resource once the watch reached or passed the write it records. A nil
// c does nothing.
func (c *Kind) Apply(ev *state.Event, md *resource.Metadata) {
	if c == nil {
		return
	}
	keys := c.eventKeys(ev)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.applyLocked(ev, md, keys)
}

// eventKeys returns the index keys of a watch event's resource (nil for a
// destruction, or without indexes), computed without mu: the index
// functions are user code.
func (c *Kind) eventKeys(ev *state.Event) *keySet {
	if ev.Type == state.Destroyed {
		return nil
	}
	return c.indexKeys(ev.Resource)
}

// ApplyBatch applies a batch of watch events, as Apply does each, at once:
// no read sees part of it. current tells that the contents are then the
// kind's resources of the state at revision rev (a live batch, or the end
// of a bootstrap); otherwise (a re-list's changes before its end) they are
// not at one revision, and reads by revision go to the state until a
// current batch. A nil c does nothing.
func (c *Kind) ApplyBatch(events []state.Event, metas []*resource.Metadata, rev uint64, current bool) {
	if c == nil {
		return
	}
	var keys []*keySet
	if c.ix != nil {
		keys = make([]*keySet, len(events))
		for i := range events {
			keys[i] = c.eventKeys(&events[i])
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range events {
		var k *keySet
		if keys != nil {
			k = keys[i]
		}
		c.applyLocked(&events[i], metas[i], k)
	}
	c.settling = !current
	if current {
		c.applied = max(c.applied, rev)
	}
}

// applyLocked applies one watch event with its resource's index keys. The
// caller holds mu.
func (c *Kind) applyLocked(ev *state.Event, md *resource.Metadata, keys *keySet) {
	id := md.ID()
	defer c.reindexLocked(id)
	if ev.Type == state.Destroyed {
		delete(c.base, id)
	} else {
		md.Freeze() // read by any number of goroutines from now on
		c.base[id] = baseEntry{res: ev.Resource, md: md, keys: keys}
	}
	if o, ok := c.overlay[id]; ok && superseded(o, ev.Type, md) {
		delete(c.overlay, id)
	}
}

// Unchanged reports whether the watch delivered id last with md's
// generation and version (after a re-list: nothing changed while the watch
// was down). A kind watch remembers what it routed in its cache, when the
// kind is cached.
func (c *Kind) Unchanged(id resource.ID, md *resource.Metadata) bool {
	c.mu.RLock()
	b, ok := c.base[id]
	c.mu.RUnlock()
	return ok && b.md.Created().Equal(md.Created()) && b.md.Version().Equal(md.Version())
}

// Delivered returns the resource id as the watch delivered it, if
// present.
func (c *Kind) Delivered(id resource.ID) (resource.Resource, bool) {
	c.mu.RLock()
	b, ok := c.base[id]
	c.mu.RUnlock()
	return b.res, ok
}

// AppendDelivered calls add with every resource the watch delivered as
// present, as it delivered it (the event's resource and its metadata).
func (c *Kind) AppendDelivered(add func(res resource.Resource, md *resource.Metadata)) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, b := range c.base {
		add(b.res, b.md)
	}
}

// superseded reports whether a watch event for the resource (of type t,
// with metadata md) is at or after the write recorded in o. Within one
// generation versions grow; a later generation was created later.
func superseded(o overlayEntry, t state.EventType, md *resource.Metadata) bool {
	gen := genOf(md)
	if o.gen == 0 || gen == 0 {
		// Generation unknown: fall back to versions alone.
		if o.res == nil {
			return t == state.Destroyed
		}
		return md.Version().Value() >= o.version
	}
	switch {
	case gen > o.gen:
		return true
	case gen < o.gen:
		return false
	case o.res == nil:
		return t == state.Destroyed
	default:
		return t == state.Destroyed || md.Version().Value() >= o.version
	}
}

// PutWritten records r, the state of a resource after a write through the
// Runtime: a snapshot the state handed out read-only (never a resource a
// controller may change), which c keeps, frozen (see
// resource.Metadata.Freeze), as it keeps what the watch delivers. Nothing is recorded when the
// cache already holds this write or a later one.
func (c *Kind) PutWritten(r resource.Resource) {
	if c == nil {
		return
	}
	md := r.Metadata()
	md.Freeze() // read by any number of goroutines from now on
	id := md.ID()
	o := overlayEntry{res: r, keys: c.indexKeys(r), gen: genOf(md), version: md.Version().Value()}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.reindexLocked(id)
	if cur, ok := c.overlay[id]; ok && cur.res != nil && cur.gen == o.gen && cur.version > o.version {
		return // a later write is recorded already
	}
	if b, ok := c.base[id]; ok {
		if superseded(o, state.Updated, b.md) {
			delete(c.overlay, id) // the watch is already there
			return
		}
	}
	c.overlay[id] = o
}

// PutDestroyed records the destruction of ptr through the Runtime.
func (c *Kind) PutDestroyed(ptr resource.Pointer) {
	if c == nil {
		return
	}
	id := ptr.ID()
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.reindexLocked(id)
	var gen int64
	if cur, ok := c.overlay[id]; ok {
		if cur.res == nil {
			return
		}
		gen = cur.gen
	} else if b, ok := c.base[id]; ok {
		gen = genOf(b.md)
	} else {
		return // the watch already saw it go
	}
	c.overlay[id] = overlayEntry{gen: gen}
}

// lookupLocked returns the current resource of id (overlay first). The
// caller holds mu.
func (c *Kind) lookupLocked(id resource.ID) resource.Resource {
	if o, ok := c.overlay[id]; ok {
		return o.res
	}
	return c.base[id].res
}

// Verify records what the state said of the kind (see
// [state.RevisionReporter.KindRevision]): its newest change is last, and
// none follows up to revision at. When the cache has last, its contents
// are the kind's at revision at too. A nil c does nothing.
func (c *Kind) Verify(last, at uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if c.numbered && !c.settling && last <= c.applied {
		c.verified = max(c.verified, at)
	}
	c.mu.Unlock()
}

// servesLocked reports whether the contents may serve a read that needs
// revision need, and the revision they are at (0 when not numbered). The
// caller holds mu.
func (c *Kind) servesLocked(need uint64) (uint64, bool) {
	if !c.numbered {
		return 0, true
	}
	at := max(c.applied, c.verified)
	return at, !c.settling && at >= need
}

// Numbered reports whether reads are served by revision (the state numbers
// its changes): the Runtime's writes then need no overlay. False on a nil
// c.
func (c *Kind) Numbered() bool { return c != nil && c.numbered }

// Get returns the resource (a copy, or the shared snapshot when opts ask
// for a read-only Get), or a not-found error, whatever revision the cache
// is at.
func (c *Kind) Get(ptr resource.Pointer, opts []state.GetOption) (resource.Resource, error) {
	r, _, err := c.GetAt(ptr, opts, 0)
	return r, err
}

// GetAt is Get when the cache is at revision need or later: served is
// false otherwise, and the read goes to the state. The revision the read
// reflects is stored as [state.WithGetRevision] asks. Copies are made
// outside the lock: DeepCopy is the resource's code.
func (c *Kind) GetAt(ptr resource.Pointer, opts []state.GetOption, need uint64) (r resource.Resource, served bool, err error) {
	id := ptr.ID()
	c.mu.RLock()
	rev, ok := c.servesLocked(need)
	if ok {
		r = c.lookupLocked(id)
	}
	c.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	var o state.GetOptions
	if len(opts) > 0 {
		opt.Apply(&o, opts)
	}
	if o.Revision != nil {
		*o.Revision = rev
	}
	if r == nil {
		return nil, true, state.NewNotFoundError(resource.PointerOf(ptr), "not found")
	}
	if o.ReadOnly {
		return r, true, nil
	}
	r, err = state.DeepCopyOf(r)
	return r, true, err
}

// List returns the resources matching the options, sorted by ID: copies,
// or the shared snapshots when the options ask for a read-only List,
// whatever revision the cache is at.
func (c *Kind) List(opts ...state.ListOption) (resource.List, error) {
	l, _, err := c.ListAt(opts, 0)
	return l, err
}

// ListAt is List when the cache is at revision need or later: served is
// false otherwise, and the read goes to the state. The revision the read
// reflects is stored as [state.WithListRevision] asks.
func (c *Kind) ListAt(opts []state.ListOption, need uint64) (l resource.List, served bool, err error) {
	o, ok := c.rlockServing(opts, need)
	if !ok {
		return resource.List{}, false, nil
	}
	ids := make([]resource.ID, 0, len(c.base)+len(c.overlay))
	for id := range c.base {
		ids = append(ids, id)
	}
	for id := range c.overlay {
		if _, dup := c.base[id]; !dup {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	found := make([]resource.Resource, 0, len(ids))
	for _, id := range ids {
		if r := c.lookupLocked(id); r != nil && o.IDQuery.Matches(id) {
			found = append(found, r)
		}
	}
	c.mu.RUnlock()
	l, err = finishList(found, &o)
	return l, true, err
}

// rlockServing applies the list options opts and read-locks c when it is
// at revision need or later, storing that revision as [state.WithListRevision]
// asks: the start of every List of the cache, by index or not. When c is
// not at need yet, ok is false and c is not locked.
func (c *Kind) rlockServing(opts []state.ListOption, need uint64) (o state.ListOptions, ok bool) {
	opt.Apply(&o, opts)
	c.mu.RLock()
	rev, ok := c.servesLocked(need)
	if !ok {
		c.mu.RUnlock()
		return o, false
	}
	if o.Revision != nil {
		*o.Revision = rev
	}
	return o, true
}

// finishList filters found (snapshots taken under mu, sorted by ID) by the
// label queries of o (their union, rule S15; the caller validated them)
// and copies them unless o asks for a read-only List: the
// end of every List of the cache, by index or not. Resources' methods are
// user code: the caller has released mu.
func finishList(found []resource.Resource, o *state.ListOptions) (resource.List, error) {
	items := found[:0]
	for _, r := range found {
		if o.LabelQueries.Matches(*r.Metadata().Labels()) {
			items = append(items, r)
		}
	}
	clear(found[len(items):])
	return state.ListOf(items, o.ReadOnly)
}
