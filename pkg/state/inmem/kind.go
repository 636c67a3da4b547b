package inmem

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/internal/plaincopy"
	"github.com/resgraph/resgraph/pkg/resource"
)

// record is one change of a kind, as kept in the history ring. A record
// is written before it is published in the ring and then only read, until
// it leaves the ring: the write of the change that replaces it in the ring
// reuses it in place when no kind watcher can be reading it (see
// reusableLocked), so that a kind whose watchers keep up (or that has none)
// allocates no record once its ring is full. Whoever keeps a change beyond
// that (a kind watcher's batch, a replay, a single-resource watcher's
// queue, a check of the mutation detector) copies the record. The
// resources a record refers to are immutable once published: a stored
// resource is a private copy that nothing writes to, so records, events
// and the store share them freely and copy only when handing one out.
type record struct {
	old resource.Resource // state before the change; nil when absent
	new resource.Resource // state after the change; nil when absent
	// The resource's ID is read from new or old (see ID): a record is 56
	// bytes with it read so rather than 72 with a copy of it.
	seq uint64
	// rev is the change's revision, from the state's one sequence (see
	// core.rev).
	rev uint64
	// size is the estimated memory of old, which the history holds alone
	// once the change is made (see kindStore.histBytes).
	size int64
}

// ID returns the ID of the resource the record changed, from the state
// after the change or, for a destroy, before it (a record has at least
// one). Both are snapshots the state stored: their Metadata is read as
// the state read it when it stored them.
func (r *record) ID() resource.ID {
	if r.new != nil {
		return r.new.Metadata().ID()
	}
	return r.old.Metadata().ID()
}

// set writes the record's fields one by one: a whole-record assignment
// builds the record aside and copies it with its pointers' write
// barriers.
func (r *record) set(old, new resource.Resource, seq, rev uint64, size int64) {
	r.old, r.new = old, new
	r.seq, r.rev, r.size = seq, rev, size
}

// kindStore holds the resources of one kind, the history ring of its
// changes, and its watchers.
//
// Sequence numbers count the changes of the kind from 1; the ring keeps
// the last cap of them. Writers hold mu. Kind watchers read the ring
// without mu: a writer publishes a record by storing its pointer in the
// ring slot and then the new head, and a watcher copies the records it read
// and claims them by advancing its position with a compare-and-swap. A
// write about to overwrite the record at a watcher's position moves that
// watcher into the spill (see spill.go) with a compare-and-swap of the
// position to [spilled], so the watcher learns it lost the race and drains
// the spill instead; nothing is lost and nothing is delivered twice.
type kindStore struct {
	kind    resource.Kind
	ns      resource.Namespace
	typ     resource.Type
	stateID uint64
	kindID  uint64
	// persistent tells that stateID names a run of a persistent storage
	// (see earlierRun).
	persistent bool
	cap        int
	// lagLimit is how far behind the newest change a kind watcher may be
	// and still get every change as its own event; further behind, it
	// catches up by coalescing (see kindWatcher.catchUp).
	lagLimit int

	mu sync.Mutex

	// revs is the state's revision counter, shared by every kind; a write
	// takes its revision from it holding mu, so that the kind's changes
	// have increasing revisions in the order they are applied.
	revs *atomic.Uint64
	// lastRev is the revision of the kind's newest change (0: none).
	// Guarded by mu.
	lastRev uint64

	// items are the stored versions by ID, as entries (see slot.go):
	// read them through bare. Guarded by mu.
	items itemMap
	// tab is the type word of the versions items holds bare (see
	// slot.go). Guarded by mu.
	tab unsafe.Pointer
	// order is the order of the keys of items (see idOrder). Guarded by
	// mu.
	order idOrder
	// view is the entry of items of each ID of order.sorted, at the
	// same index, as of the last List (or bootstrap snapshot), kept for
	// the next ones (see snapshotLocked); empty when none is kept. updated
	// are the IDs updated since, with repeats. Guarded by mu.
	view    []unsafe.Pointer
	updated []resource.ID
	// userCopies tells that a version the kind stored (since its start)
	// copies itself with user code (it is not a resource of
	// [usercode.CopiesPlainly]): until one is, a Get copies the version it
	// found without the deferred recover and without asking. Guarded by
	// mu.
	userCopies bool
	// plainOf is the [plaincopy.ForType] of the first type of resource the
	// kind stored plainly (nil until then), which a write of a resource of
	// that type copies it with (see storedOf). Set once, without mu.
	plainOf atomic.Pointer[plaincopy.Func]
	// statePlainOf is the state's plainOf (see core.plainOf), which the
	// kind's first plain type sets when no kind set it before.
	statePlainOf *atomic.Pointer[plaincopy.Func]
	// count is len(items), written under mu and read without it.
	count atomic.Int64
	// lastCreated is the creation time given to the newest resource of
	// the kind, in nanoseconds since the Unix epoch (see unixNanoOf).
	// Creation times strictly increase within a kind, so that two
	// incarnations of one ID never share one (see checkUpdate). Guarded
	// by mu.
	lastCreated int64

	// ring is the history: seq s is at index (s-1)%cap, in chunks of
	// ringChunk slots allocated as the history first grows (a kind with
	// few changes costs little, and growing never copies). Chunks and
	// slots are written under mu and read without it.
	ring []atomic.Pointer[ringChunkSlots]
	// seq is the seq of the newest record (0: none yet). Guarded by mu.
	seq uint64
	// head is seq as the kind watchers read it, without mu: written under
	// mu while the kind has kind watchers, and made seq again when one is
	// added (see addKindWatcherLocked), so that a write of a kind nobody
	// watches makes no atomic store of it. Read it only from a kind
	// watcher; everyone else reads seq, holding mu.
	head atomic.Uint64
	// next is the ring index of the next record. Guarded by mu.
	next int
	// floor is the seq of the oldest record the history keeps: records
	// leave it when the ring overwrites them, or earlier when the
	// versions they replaced hold more than byteBudget bytes (their slot
	// is then emptied). Guarded by mu.
	floor uint64
	// histBytes is the estimated memory of the versions that only the
	// kept records refer to: the sum of their sizes. Guarded by mu.
	histBytes  int64
	byteBudget int64
	// maxSize is the largest size estimate of a version the kind stored;
	// tracking tells that the kind keeps each version's size in its box,
	// from the first write at which cap versions of maxSize would exceed
	// byteBudget on, and untracked is the size counted for a version
	// stored bare (see slot.go). Guarded by mu.
	maxSize, untracked int64
	tracking           bool
	// bareUpTo is the largest size of a plain, unwatched version of the
	// kind's type word that itemLocked stores bare without more ado:
	// maxSize, or -1 while the kind tracks sizes. Guarded by mu.
	bareUpTo int64
	// block is where new records are carved from, recordBlock at a time,
	// when the record leaving the ring cannot be reused. Guarded by mu.
	block []record
	// minReleased is a lower bound of the kind watchers' released
	// positions (math.MaxUint64 when there are none): a record of a seq
	// below it can be reused in place. A recount that finds a watcher
	// still holding back is not repeated before the seq reaches
	// recountAt. Guarded by mu.
	minReleased, recountAt uint64

	// kindWatchers are the watchers of the whole kind. Guarded by mu.
	kindWatchers []*kindWatcher
	// parking is the group the kind watchers that wait for a change park
	// in (see wake.go); nil when none is parked. The next write takes it
	// and starts waking its members once it has released mu, so the
	// watchers it wakes do not queue up on a held lock. Guarded by mu.
	parking *wakeGroup
	// minPos is a lower bound of the positions of the kind watchers that
	// read the ring (math.MaxUint64 when there are none): no overwrite
	// below it needs a look at the watchers. Guarded by mu.
	minPos uint64
	// lastWrite is the time of the newest write (UnixNano), writeGap a
	// moving average of the time between writes while the kind has kind
	// watchers (an exponential one with weight 1/8, in nanoseconds).
	// Guarded by mu.
	lastWrite, writeGap int64
	// spill are the spill generations, oldest first (see spill.go).
	// Guarded by mu.
	spill []*spillGen
	// spare is an empty spill generation kept for reuse. Guarded by mu.
	spare *spillGen

	// idWatchers are the single-resource watchers by ID. Guarded by mu.
	idWatchers map[resource.ID][]*idWatcher

	// det is the mutation detector; nil when it is off (its maps are
	// guarded by mu).
	det *detector

	// taps see each change as it is committed (see tap.go); tap is what
	// a write calls: the one tap itself, a fan-out to several, or nil
	// (setTapsLocked keeps it). Guarded by mu.
	taps []*tapEntry
	tap  kindtap.Tap
}

// spilled is the position of a kind watcher that fell into the spill.
const spilled = math.MaxUint64

// ringChunk is the number of slots per ring chunk (a power of two).
const ringChunk = 256

// ringChunkSlots is one chunk of the ring.
type ringChunkSlots [ringChunk]atomic.Pointer[record]

// recordBlock is the number of records allocated at once: as many as
// fill 4 KiB, one of the allocator's size classes, so that a block wastes
// no more than a record's size.
const recordBlock = 4096 / int(unsafe.Sizeof(record{}))

// recountGap is how many changes a write that found a kind watcher holding
// back the reuse of records (see reusableLocked) waits before it counts
// the watchers' positions again: while a watcher lags a whole ring behind,
// its kind's writes do not each pay a look at every watcher.
const recountGap = 64

// maxLag is the largest lag limit of a kind (see kindStore.lagLimit).
const maxLag = 1024

func newKindStore(kind resource.Kind, revs *atomic.Uint64, stateID, kindID uint64, capacity int, byteBudget int64) *kindStore {
	return &kindStore{
		revs:        revs,
		kind:        kind,
		ns:          kind.Namespace(),
		typ:         kind.Type(),
		stateID:     stateID,
		kindID:      kindID,
		cap:         capacity,
		lagLimit:    min(capacity, maxLag),
		items:       itemMap{},
		minPos:      math.MaxUint64,
		ring:        make([]atomic.Pointer[ringChunkSlots], (capacity+ringChunk-1)/ringChunk),
		minReleased: math.MaxUint64,
		floor:       1,
		byteBudget:  byteBudget,
	}
}

// oldest returns the seq of the oldest record the history keeps, given
// the head (head+1 when it keeps none). The caller holds mu.
func (ks *kindStore) oldest(head uint64) uint64 {
	return min(ks.floor, head+1)
}

// index returns the ring index of seq s.
func (ks *kindStore) index(s uint64) int { return int((s - 1) % uint64(ks.cap)) }

// slot returns the ring slot of the ring index i.
func (ks *kindStore) slot(i int) *atomic.Pointer[record] {
	return &ks.ring[uint(i)/ringChunk].Load()[uint(i)%ringChunk]
}

// recordLocked returns the record of seq s, which must be in the history.
// The caller holds mu, and copies the record to keep it beyond: it may be
// reused once it leaves the history.
func (ks *kindStore) recordLocked(s uint64) *record {
	return ks.slot(ks.index(s)).Load()
}

// reusableLocked reports whether rec, the record leaving the ring at this
// write, can be overwritten in place by the new change: no kind watcher
// can be reading it, as each one's released position is past it (see
// kindWatcher.released). Otherwise the write takes a new record, and rec
// stays as it is for whoever reads it.
func (ks *kindStore) reusableLocked(rec *record) bool {
	s := rec.seq
	if s < ks.minReleased {
		return true
	}
	if s < ks.recountAt {
		return false
	}
	lowest := uint64(math.MaxUint64)
	for _, w := range ks.kindWatchers {
		lowest = min(lowest, w.released.Load())
	}
	ks.minReleased = lowest
	if s < lowest {
		return true
	}
	ks.recountAt = s + recountGap
	return false
}

// newRecordLocked returns a record to write a change into, carved from
// the current block.
func (ks *kindStore) newRecordLocked() *record {
	if len(ks.block) == 0 {
		ks.block = make([]record, recordBlock)
	}
	rec := &ks.block[0]
	ks.block = ks.block[1:]
	return rec
}

// appendLocked appends a change to the history and queues it for the
// single-resource watchers of id; cur is the entry of items that new
// replaces (nil when absent), ref is the mutation detector's
// reference copy of new (nil when the detector is off or new is nil). It
// returns the group of parked kind watchers to wake once mu is released
// (nil when none is parked).
//
// at is the time of the write (UnixNano): while the kind's writes come
// handOffGap apart or more on average, a write hands its change to the
// parked watchers that can take it (see takeParkingLocked).
func (ks *kindStore) appendLocked(id resource.ID, cur unsafe.Pointer, new, ref resource.Resource, at int64) *wakeGroup {
	old, oldSize := ks.bare(cur), int64(0)
	if cur != nil {
		oldSize = ks.sizeLocked(cur)
	}
	seq := ks.seq + 1
	rev := ks.revs.Add(1)
	ks.lastRev = rev
	var oldRef resource.Resource
	if ref != nil || ks.watchedHint(cur) {
		// A version the detector did not watch replaced by one it does not
		// watch either (the guard's unsampled writes) has nothing to check.
		oldRef = ks.detectChangeLocked(id, seq, old, new, ref)
	}
	i := ks.next
	slot, rec := ks.leavingLocked(i, seq)
	ks.det.keepRefLocked(i, oldRef)
	fresh := rec == nil || !ks.reusableLocked(rec)
	if fresh {
		rec = ks.newRecordLocked()
	}
	rec.set(old, new, seq, rev, oldSize)
	if fresh {
		slot.Store(rec) // published once written: a lagging watcher may load it
	}
	ks.seq = seq
	if len(ks.kindWatchers) > 0 {
		ks.head.Store(seq)
		// Only parked kind watchers take this average (see the end).
		gap := min(max(at-ks.lastWrite, 0), int64(time.Second))
		ks.writeGap += (gap - ks.writeGap) / 8
	}
	ks.lastWrite = at
	if ks.tap != nil {
		ks.tap.Committed(rev, old, new, at)
	}
	if i++; i == ks.cap {
		i = 0
	}
	ks.next = i
	ks.histBytes += oldSize
	for ks.histBytes > ks.byteBudget && ks.floor < seq {
		j := ks.index(ks.floor)
		slot := ks.slot(j)
		ks.leaveLocked(ks.floor, j, slot.Load())
		slot.Store(nil) // releases the versions only it referred to
	}

	if len(ks.idWatchers) > 0 {
		for _, w := range ks.idWatchers[id] {
			w.pushLocked(rec)
		}
	}
	if ks.parking == nil {
		return nil // checked here, inlined: a write without a parked watcher makes no call
	}
	return ks.takeParkingLocked(rec, ks.writeGap >= int64(handOffGap))
}

// leavingLocked returns the ring slot at index i, where the change seq
// goes, and the record leaving the ring there (nil while the ring fills,
// or once evicted), which leaves the history first if it is still in it.
func (ks *kindStore) leavingLocked(i int, seq uint64) (*atomic.Pointer[record], *record) {
	c, j := uint(i)/ringChunk, uint(i)%ringChunk // i ≥ 0: shifts
	chunk := ks.ring[c].Load()
	if chunk == nil {
		chunk = &ringChunkSlots{}
		ks.ring[c].Store(chunk)
	}
	slot := &chunk[j]
	rec := slot.Load()
	if seq <= uint64(ks.cap) {
		return slot, rec
	}
	if s := seq - uint64(ks.cap); s >= ks.floor { // not evicted yet
		if !ks.det.holdsLocked(i) && s < ks.minPos && len(ks.spill) == 0 {
			// What leaveLocked does when no check, lagging watcher or
			// spill needs the record: without a call.
			ks.histBytes -= rec.size
			ks.floor = s + 1
		} else {
			ks.leaveLocked(s, i, rec)
		}
	}
	return slot, rec
}

// leaveLocked is called before the record of seq s (the oldest kept), rec,
// at ring index i, leaves the history, overwritten or evicted: the history
// no longer holds the version it replaced.
func (ks *kindStore) leaveLocked(s uint64, i int, rec *record) {
	ks.histBytes -= rec.size
	ks.floor = s + 1
	ks.overwriteLocked(s, i, rec)
}

// overwriteLocked is called before the record of seq s, rec, at ring index
// i, leaves the ring: kind watchers positioned on it move to the spill, and
// the spill takes the record when anyone is in it.
func (ks *kindStore) overwriteLocked(s uint64, i int, rec *record) {
	ks.det.leftLocked(i, rec)
	if s >= ks.minPos {
		ks.collectLaggersLocked(s)
	}
	if n := len(ks.spill); n > 0 {
		ks.spill[n-1].fold(rec)
	}
}

// collectLaggersLocked moves the kind watchers whose position is s (the
// record about to be overwritten) into the spill, and recomputes minPos.
func (ks *kindStore) collectLaggersLocked(s uint64) {
	lowest := uint64(math.MaxUint64)
	var gen *spillGen
	for _, w := range ks.kindWatchers {
		for {
			pos := w.pos.Load()
			if pos == spilled {
				break
			}
			if pos > s {
				lowest = min(lowest, pos)
				break
			}
			// The watcher has not claimed record s: unless it claims it
			// right now, it lost it to the spill.
			if w.pos.CompareAndSwap(pos, spilled) {
				if gen == nil {
					gen = ks.joinGenLocked()
				}
				w.gen = gen
				gen.refs++
				break
			}
		}
	}
	ks.minPos = lowest
}

// addKindWatcherLocked registers a kind watcher reading from its position.
func (ks *kindStore) addKindWatcherLocked(w *kindWatcher) {
	ks.head.Store(ks.seq) // kept from now on: see head
	ks.kindWatchers = append(ks.kindWatchers, w)
	ks.minPos = min(ks.minPos, w.pos.Load())
	w.released.Store(w.pos.Load())
	ks.minReleased = min(ks.minReleased, w.pos.Load())
}

// removeKindWatcherLocked unregisters a kind watcher.
func (ks *kindStore) removeKindWatcherLocked(w *kindWatcher) {
	if i := slices.Index(ks.kindWatchers, w); i >= 0 {
		ks.kindWatchers = slices.Delete(ks.kindWatchers, i, i+1)
	}
	if w.gen != nil {
		ks.releaseGenLocked(w.gen)
		w.gen = nil
	}
}

// addIDWatcherLocked registers a single-resource watcher.
func (ks *kindStore) addIDWatcherLocked(w *idWatcher) {
	if ks.idWatchers == nil {
		ks.idWatchers = map[resource.ID][]*idWatcher{}
	}
	ks.idWatchers[w.id] = append(ks.idWatchers[w.id], w)
}

// removeIDWatcherLocked unregisters a single-resource watcher.
func (ks *kindStore) removeIDWatcherLocked(w *idWatcher) {
	ws := ks.idWatchers[w.id]
	if i := slices.Index(ws, w); i >= 0 {
		ws = slices.Delete(ws, i, i+1)
	}
	if len(ws) == 0 {
		delete(ks.idWatchers, w.id)
	} else {
		ks.idWatchers[w.id] = ws
	}
}

// snapshot appends the stored resources, sorted by ID, to dst, and stores
// the revision they are at in *rev unless rev is nil. The resources are
// the stored (shared, immutable) values: copy before handing them out.
func (ks *kindStore) snapshot(dst []resource.Resource, rev *uint64) []resource.Resource {
	ks.mu.Lock()
	dst = ks.snapshotLocked(dst)
	if rev != nil {
		*rev = ks.revs.Load()
	}
	ks.mu.Unlock()
	return dst
}

// snapshotLocked appends the stored resources in ID order to dst.
//
// A snapshot keeps the resources it listed (view), and the next one
// starts from them instead of looking every resource up in the map
// (mostly cache misses): it replaces those updated since, each found by
// its ID in the order, and looks up those created since when they all
// come after the others (as IDs created in order do). After a create
// among them, or after more updates than maxViewUpdates allows, it looks
// every resource up; a destroy lets go of the view at once (it would keep
// the destroyed resource). The view costs an entry of items (a pointer)
// per resource of a kind that is listed; its entries are read with the
// kind's type word of the time, which changes only once the kind stores
// nothing, and so holds nothing in its view.
func (ks *kindStore) snapshotLocked(dst []resource.Resource) []resource.Resource {
	sorted, kept := ks.order.ids(ks.items)
	view := ks.view
	if kept > len(view) {
		kept = 0 // none kept (see dropViewLocked)
	}
	view = view[:kept]
	for _, id := range ks.updated {
		if i, ok := slices.BinarySearch(sorted[:kept], id); ok {
			view[i] = ks.items[id]
		}
	}
	ks.forgetUpdatesLocked()
	view = slices.Grow(view, len(sorted)-kept)
	for _, id := range sorted[kept:] {
		view = append(view, ks.items[id])
	}
	ks.view = view
	dst = slices.Grow(dst, len(view))
	for _, e := range view {
		dst = append(dst, ks.bare(e))
	}
	return dst
}

// maxViewUpdates is how many updates since the last snapshot the view
// keeps track of, for a kind of n resources: beyond, the next snapshot
// looks every resource up, which then costs less than finding each one.
func maxViewUpdates(n int) int { return n / 8 }

// updatedLocked is called by every update of a stored resource id: the
// view has to replace it.
func (ks *kindStore) updatedLocked(id resource.ID) {
	if len(ks.view) == 0 {
		return
	}
	if len(ks.updated) >= maxViewUpdates(len(ks.view)) {
		ks.dropViewLocked()
		return
	}
	ks.updated = append(ks.updated, id)
}

// dropViewLocked lets go of the resources of the view, keeping its
// storage for the next one: the next snapshot looks every resource up.
// (The restore of a persistent state writes before any snapshot is
// taken.)
func (ks *kindStore) dropViewLocked() {
	clear(ks.view)
	ks.view = ks.view[:0]
	ks.forgetUpdatesLocked()
}

// forgetUpdatesLocked empties updated, letting go of the storage of a
// burst.
func (ks *kindStore) forgetUpdatesLocked() {
	clear(ks.updated)
	if cap(ks.updated) > addedKeep {
		ks.updated = nil
	} else {
		ks.updated = ks.updated[:0]
	}
}

// defaultResourceSize is the size estimate of a resource without an
// ApproxSize method.
const defaultResourceSize = 512

// sizeOf estimates the memory a stored resource holds (see
// [WithHistoryBytes]).
// ApproxSize may be user code: a panic in it counts as the default.
func sizeOf(r resource.Resource) (n int64) {
	s, ok := r.(interface{ ApproxSize() int })
	if !ok {
		return defaultResourceSize
	}
	defer func() {
		if recover() != nil {
			n = defaultResourceSize
		}
	}()
	return int64(s.ApproxSize())
}

// unixNanoOf returns t as a kind's lastCreated holds it: its UnixNano,
// or math.MinInt64 for the zero time (none), which every creation time
// follows.
func unixNanoOf(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}
