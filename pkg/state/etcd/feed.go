package etcd

import (
	"context"
	"errors"
	"sync"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/resource"
)

// errFeedStopped is the error of a wait on a feed that stopped.
var errFeedStopped = errors.New("etcd state: the kind's watch stopped")

// liveBase is the seq of the first change a feed receives live. Changes
// read from etcd's history (before the feed started) get the seqs just
// below it, so that seqs order every change the feed knows.
const liveBase = 1 << 40

// change is one change of a kind. The resources are the shared snapshots
// of the feed: decoded once, never modified, handed to every watcher.
type change struct {
	old resource.Resource // state before; nil when absent
	new resource.Resource // state after; nil when absent
	id  resource.ID
	seq uint64
	pos position
}

// item is a resource of the kind as the feed last saw it.
type item struct {
	res resource.Resource
	seq uint64 // seq of its last change; 0 when it predates the feed
	pos position
	mod int64 // etcd's mod revision of its key
}

// gap is a stretch of history the feed did not watch and that changed
// nothing it holds: a lost watch whose relist found every resource as it
// was. The changes in it (resources created and destroyed meanwhile)
// are unknown, so a bookmark strictly inside it cannot be resumed; one at
// its start can, as nothing it saw changed.
type gap struct {
	after position // the feed's newest change before it
	until position // the end of the relist's revision
}

// maxGaps bounds the gaps a feed remembers; older ones move keptFrom.
const maxGaps = 16

// inGapLocked reports whether p lies strictly inside a gap.
func (f *feed) inGapLocked(p position) bool {
	for _, g := range f.gaps {
		if g.after.less(p) && p.less(g.until) {
			return true
		}
	}
	return false
}

// tomb is a resource the feed saw destroyed.
type tomb struct {
	last resource.Resource
	seq  uint64
	pos  position
}

// feed is the watch of one kind shared by every watcher of the kind in
// this state: one etcd watch, one goroutine, one decoded snapshot per
// change. It keeps the kind's current resources, the last cap changes in a
// ring, the changes read from etcd's history on demand (past), and the
// destroyed resources some watcher may still need (tombs).
//
// A feed runs while it has watchers: the first watcher starts it, the last
// one to leave stops it.
type feed struct {
	c      *core
	kind   resource.Kind
	key    resource.KindKey
	prefix string
	cap    int

	refs   int // watchers holding the feed; guarded by c.mu
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned

	ready    chan struct{} // closed once the first list is done
	startErr error         // the first list's error; set before ready

	pastMu sync.Mutex // serializes reading the past

	mu       sync.Mutex
	items    map[resource.ID]*item // guarded by mu
	tombs    map[resource.ID]tomb  // guarded by mu
	ring     []change              // seq s at (s-liveBase)%cap; guarded by mu
	head     uint64                // seq of the newest change (liveBase-1: none); guarded by mu
	headPos  position              // every change up to it is applied; guarded by mu
	last     position              // position of the newest change; guarded by mu
	keptFrom position              // every change after it is kept; guarded by mu
	past     pastState             // the changes before the first list read so far; guarded by mu
	watchers map[*watcher]struct{} // guarded by mu
	gaps     []gap                 // guarded by mu
	// applied is closed and replaced whenever headPos moves, to wake the
	// writes waiting for their change to be applied. Guarded by mu.
	applied chan struct{}
}

// acquire returns the running feed of a kind, starting it when needed,
// once it has listed the kind. The caller releases it.
func (c *core) acquire(ctx context.Context, k resource.KindKey) (*feed, error) {
	c.mu.Lock()
	f := c.feeds[k]
	if f == nil {
		fctx, cancel := context.WithCancel(context.Background())
		f = &feed{
			c: c, kind: k, key: k, prefix: c.kindPrefix(k.Namespace(), k.Type()), cap: c.historyCap,
			ctx: fctx, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}),
			items: map[resource.ID]*item{}, tombs: map[resource.ID]tomb{},
			ring: make([]change, c.historyCap), head: liveBase - 1,
			watchers: map[*watcher]struct{}{}, applied: make(chan struct{}),
		}
		c.feeds[k] = f
		go f.run()
	}
	f.refs++
	c.mu.Unlock()
	select {
	case <-f.ready:
	case <-ctx.Done():
		c.release(f)
		return nil, context.Cause(ctx)
	}
	if f.startErr != nil {
		c.release(f)
		return nil, f.startErr
	}
	return f, nil
}

// release drops one hold of f and stops it when it was the last.
func (c *core) release(f *feed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.refs--
	if f.refs > 0 {
		return
	}
	if c.feeds[f.key] == f {
		delete(c.feeds, f.key)
	}
	f.cancel()
}

// cached returns the resource id of a kind as its running feed holds it,
// with the mod revision of its key; ok is false when no feed runs. The
// resource is a shared snapshot: never modify it. It may be stale (another
// process wrote since): use it only as the expectation of a transaction.
func (c *core) cached(p resource.PointerKey) (res resource.Resource, mod int64, ok bool) {
	c.mu.Lock()
	f := c.feeds[p.Kind()]
	c.mu.Unlock()
	if f == nil {
		return nil, 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.ready:
	default:
		return nil, 0, false
	}
	if it := f.items[p.ID()]; it != nil {
		return it.res, it.mod, true
	}
	return nil, 0, true
}

// isShared reports whether r is the current shared snapshot of its
// resource in a running feed.
func (c *core) isShared(r resource.Resource) bool {
	md := r.Metadata()
	c.mu.Lock()
	f := c.feeds[resource.KindOf(md)]
	c.mu.Unlock()
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	it := f.items[md.ID()]
	return it != nil && it.res == r
}

// oldestLocked returns the seq of the oldest change kept.
func (f *feed) oldestLocked() uint64 {
	if f.head >= liveBase+uint64(f.cap) {
		return f.head - uint64(f.cap) + 1
	}
	return liveBase - uint64(len(f.past.changes))
}

// changeLocked returns the kept change of seq s.
func (f *feed) changeLocked(s uint64) *change {
	if s >= liveBase {
		return &f.ring[(s-liveBase)%uint64(f.cap)]
	}
	return &f.past.changes[s-(liveBase-uint64(len(f.past.changes)))]
}

// appendLocked records a change of id from the current state to res
// (nil: destroyed) at pos.
func (f *feed) appendLocked(id resource.ID, res resource.Resource, pos position, mod int64) {
	var old resource.Resource
	if it := f.items[id]; it != nil {
		old = it.res
	}
	if old == nil && res == nil {
		return
	}
	if sameWrite(old, res) {
		f.items[id].mod = mod // a record rewritten by a rotation: no change
		return
	}
	f.head++
	seq := f.head
	slot := &f.ring[(seq-liveBase)%uint64(f.cap)]
	if seq >= liveBase+uint64(f.cap) && f.keptFrom.less(slot.pos) {
		// The overwritten change leaves the history (keptFrom never
		// goes back: a relist may have moved it past older changes).
		f.keptFrom = slot.pos
	}
	*slot = change{old: old, new: res, id: id, seq: seq, pos: pos}
	f.last = pos
	if res == nil {
		delete(f.items, id)
		f.tombs[id] = tomb{last: old, seq: seq, pos: pos}
	} else {
		f.items[id] = &item{res: res, seq: seq, pos: pos, mod: mod}
		delete(f.tombs, id)
	}
}

// applyLocked applies the events of one watch response.
func (f *feed) applyLocked(events []*clientv3.Event) {
	for _, ev := range events {
		// Every change up to its revision is applied once it is, the
		// kind's head key's included (it carries no resource).
		f.headPos = endOf(ev.Kv.ModRevision)
		id, ok := idOf(f.prefix, ev.Kv.Key)
		if !ok {
			continue // the head key, or a key below the kind's prefix that is not a resource
		}
		pos := position{rev: ev.Kv.ModRevision}
		if f.last.rev == pos.rev {
			pos.sub = f.last.sub + 1
		}
		var res resource.Resource
		if ev.Type == mvccpb.PUT {
			r, err := f.c.decodeShared(ev.Kv)
			if err != nil {
				f.c.logUndecodable(err)
			}
			res = r // an undecodable value counts as absent
		}
		f.appendLocked(id, res, pos, ev.Kv.ModRevision)
	}
}

// wakeLocked signals every watcher that changes are there, and the writes
// waiting for the feed to apply their revision.
func (f *feed) wakeLocked() {
	for w := range f.watchers {
		w.signal()
	}
	close(f.applied)
	f.applied = make(chan struct{})
}

// written waits until the feed of the kind, if one runs, has applied
// revision rev, so that the watchers of this state have every change this
// state wrote before they are queued (what a watch started after a write
// returned sees: tail events, bootstrap contents, bookmarks). It gives up,
// silently, when ctx is done or the feed stops: the write itself is done.
func (c *core) written(ctx context.Context, k resource.KindKey, rev int64) {
	c.mu.Lock()
	f := c.feeds[k]
	c.mu.Unlock()
	if f == nil {
		return
	}
	_ = f.waitApplied(ctx, rev)
}

// waitApplied waits until the feed has applied every change up to
// revision rev; it fails when ctx is done or the feed stops first.
func (f *feed) waitApplied(ctx context.Context, rev int64) error {
	for {
		f.mu.Lock()
		done, ch := f.headPos.rev >= rev, f.applied
		f.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-f.done:
			return errFeedStopped
		}
	}
}

// pruneTombsLocked forgets the destroyed resources that every watcher has
// read past; it runs when the tombs outnumber the resources, so its cost
// is amortized over the changes that made them.
func (f *feed) pruneTombsLocked() {
	if len(f.tombs) <= 64+len(f.items) {
		return
	}
	low := f.head + 1
	for w := range f.watchers {
		low = min(low, w.pos)
	}
	for id, t := range f.tombs {
		if t.seq < low {
			delete(f.tombs, id)
		}
	}
}

// sameWrite reports whether a and b are the same write of one resource
// (version and creation time equal): a record rewritten, the resource
// unchanged, by a key rotation ([Rotate]).
func sameWrite(a, b resource.Resource) bool {
	if a == nil || b == nil {
		return false
	}
	am, bm := a.Metadata(), b.Metadata()
	return am.Version().Equal(bm.Version()) && am.Created().Equal(bm.Created())
}
