package etcd

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/resource"
)

// logUndecodable logs a value that does not decode (the error names its
// key); the resource counts as absent and everything else goes on.
func (c *core) logUndecodable(err error) {
	c.log.Error("etcd state: a value does not decode; the resource is treated as absent", zap.Error(err))
}

// resyncBackoff spaces the feed's attempts to list its kind again after
// its watch ended; a list that succeeds resets it.
var resyncBackoff = retry.Backoff{Initial: 50 * time.Millisecond, Max: 2 * time.Second}

// run lists the kind, then follows its changes until the feed is
// stopped. When etcd ends the watch (compaction past the feed's revision,
// a lost leader, a restart of the server, a broken connection), the feed
// lists the kind again and records the difference as changes, so that
// every watcher receives the final state of every resource (rule S12),
// and watches again from there. It never gives up while it has watchers.
func (f *feed) run() {
	defer close(f.done)
	rev, err := f.list()
	f.startErr = err
	close(f.ready)
	if err != nil {
		return
	}
	bo := resyncBackoff.Sequence()
	for {
		rev = f.follow(rev)
		for f.ctx.Err() == nil {
			next, err := f.resync()
			if err == nil {
				rev = next
				bo.Reset()
				break
			}
			delay := bo.Next()
			f.c.log.Warn("etcd state: relisting a kind after its watch ended failed; retrying",
				zap.String("kind", resource.KindString(f.kind)), zap.Duration("in", delay), zap.Error(err))
			retry.Wait(f.ctx, delay)
		}
		if f.ctx.Err() != nil {
			return
		}
	}
}

// list reads the kind for the first time and returns the revision read.
func (f *feed) list() (int64, error) {
	resp, err := f.c.cli.Get(f.ctx, f.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, fmt.Errorf("etcd state: watch %s: list: %w", resource.KindString(f.kind), err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, kv := range f.resources(resp.Kvs) {
		r, err := f.c.decodeShared(kv)
		if err != nil {
			f.c.logUndecodable(err)
			continue
		}
		f.items[id] = &item{res: r, pos: position{rev: kv.ModRevision}, mod: kv.ModRevision}
	}
	rev := resp.Header.Revision
	f.headPos = endOf(rev)
	f.last = f.headPos
	f.startPastLocked(f.span(resp.Kvs))
	f.wakeLocked()
	return rev, nil
}

// span returns the revisions of the kind's newest and first changes from
// a listing of its prefix: the newest mod revision (its head key's, which
// every write of this package puts), and the head key's creation (the
// oldest creation listed when there is no head key: keys written by other
// means). Changes made by other means than this package — a deletion
// above all, which leaves no key — may lie outside it.
func (f *feed) span(kvs []*mvccpb.KeyValue) (until, floor int64) {
	head := false
	for _, kv := range kvs {
		until = max(until, kv.ModRevision)
		switch {
		case string(kv.Key) == f.prefix:
			floor, head = kv.CreateRevision, true
		case !head && (floor == 0 || kv.CreateRevision < floor):
			floor = kv.CreateRevision
		}
	}
	if len(kvs) == 0 {
		floor = 1
	}
	return until, floor
}

// resources yields the resources' keys among kvs, a listing of the
// kind's prefix (its head key left out), each with its resource's ID.
func (f *feed) resources(kvs []*mvccpb.KeyValue) iter.Seq2[resource.ID, *mvccpb.KeyValue] {
	return func(yield func(resource.ID, *mvccpb.KeyValue) bool) {
		for _, kv := range kvs {
			if id, ok := idOf(f.prefix, kv.Key); ok && !yield(id, kv) {
				return
			}
		}
	}
}

// follow watches the kind from after revision rev until the watch ends or
// the feed stops, and returns the revision it applied up to.
func (f *feed) follow(rev int64) int64 {
	ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(f.ctx))
	defer cancel()
	wch := f.c.cli.Watch(ctx, f.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithProgressNotify())
	for resp := range wch {
		if err := resp.Err(); err != nil || resp.Canceled {
			if f.ctx.Err() == nil {
				f.c.log.Warn("etcd state: watch ended; relisting", zap.String("kind", resource.KindString(f.kind)),
					zap.Int64("revision", rev), zap.Int64("compacted", resp.CompactRevision), zap.Error(err))
			}
			return rev
		}
		f.mu.Lock()
		if len(resp.Events) > 0 {
			f.applyLocked(resp.Events)
			rev = resp.Events[len(resp.Events)-1].Kv.ModRevision
		} else if resp.IsProgressNotify() && resp.Header.Revision > rev {
			rev = resp.Header.Revision
			f.headPos = endOf(rev)
		}
		f.pruneTombsLocked()
		f.wakeLocked()
		f.mu.Unlock()
	}
	return rev
}

// addGapLocked records a gap, forgetting those that keptFrom covers; when
// too many remain, the oldest moves keptFrom (bookmarks before it are then
// refused, which is safe; it is older than the feed's newest change, which
// happened after it, so bootstrap bookmarks stay resumable).
func (f *feed) addGapLocked(g gap) {
	f.gaps = slices.DeleteFunc(f.gaps, func(o gap) bool { return !f.keptFrom.less(o.until) })
	if n := len(f.gaps); n > 0 && f.gaps[n-1].after == g.after {
		f.gaps[n-1].until = g.until // nothing changed since: one gap
		return
	}
	if len(f.gaps) == maxGaps {
		f.keptFrom = f.gaps[0].until
		f.gaps = slices.Delete(f.gaps, 0, 1)
	}
	f.gaps = append(f.gaps, g)
}

// resync lists the kind again and records how it differs from what the
// feed holds as changes at the list's revision: updated and created
// resources in the order of their last writes, then destroyed ones. The
// changes between the feed's revision and the list's are coalesced, so a
// bookmark between them can no longer be resumed.
func (f *feed) resync() (int64, error) {
	resp, err := f.c.cli.Get(f.ctx, f.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	rev := resp.Header.Revision
	type put struct {
		id  resource.ID
		res resource.Resource
		mod int64
	}
	var puts []put
	listed := make(map[resource.ID]bool, len(resp.Kvs))
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, kv := range f.resources(resp.Kvs) {
		listed[id] = true
		if it := f.items[id]; it != nil && it.mod == kv.ModRevision {
			continue
		}
		r, err := f.c.decodeShared(kv)
		if err != nil {
			f.c.logUndecodable(err)
		}
		puts = append(puts, put{id, r, kv.ModRevision})
	}
	slices.SortFunc(puts, func(a, b put) int { return cmp.Compare(a.mod, b.mod) })
	var gone []resource.ID
	for _, id := range slices.Sorted(maps.Keys(f.items)) {
		if !listed[id] {
			gone = append(gone, id)
		}
	}
	if len(puts) == 0 && len(gone) == 0 {
		f.addGapLocked(gap{after: f.last, until: endOf(rev)})
	} else {
		pos := position{rev: rev}
		f.keptFrom = pos
		for _, p := range puts {
			pos.sub++
			f.appendLocked(p.id, p.res, pos, p.mod)
		}
		for _, id := range gone {
			pos.sub++
			f.appendLocked(id, nil, pos, 0)
		}
	}
	f.headPos = endOf(rev)
	f.wakeLocked()
	f.c.counters.Relists.Add(1)
	return rev, nil
}
