package etcd

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/leadership"
)

// watch follows the elections of the prefix until ctx is done: it reviews
// them (see review) once, then after every change etcd reports and every
// change of this replica's own part (a campaign that became a term), and
// starts over with a new read when the watch fails.
func (e *Elector) watch(ctx context.Context) {
	for ctx.Err() == nil {
		rev, err := e.review(ctx)
		if err != nil {
			if ctx.Err() == nil {
				e.log.Warn("etcd elector: reading the elections failed", zap.Error(err))
			}
			wait(ctx, campaignRetry)
			continue
		}
		wctx, cancel := context.WithCancel(ctx)
		e.follow(wctx, e.cli.Watch(wctx, e.root, clientv3.WithPrefix(), clientv3.WithRev(rev+1)))
		cancel()
	}
}

// follow reviews the elections after every change wch reports and after
// every kick, until the watch or a review fails, or ctx is done.
func (e *Elector) follow(ctx context.Context, wch clientv3.WatchChan) {
	for {
		select {
		case wr, ok := <-wch:
			if !ok || wr.Err() != nil || wr.Canceled {
				return
			}
		case <-e.kick:
		case <-ctx.Done():
			return
		}
		if _, err := e.review(ctx); err != nil {
			return
		}
	}
}

// candidate is a candidate key of an election.
type candidate struct {
	lease string // the hexadecimal lease ID, the key's last part
	rev   int64  // the key's create revision
	key   string
}

// review reads every election of the prefix (one linearizable read),
// ends the terms whose key is gone, and spreads the elections over the
// replicas (see Elector). It returns the revision of the read.
func (e *Elector) review(ctx context.Context) (int64, error) {
	resp, err := e.cli.Get(ctx, e.root, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	lines := map[string][]candidate{}
	for _, kv := range resp.Kvs {
		rest := strings.TrimPrefix(string(kv.Key), e.root)
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			continue
		}
		name := unescaper.Replace(rest[:i])
		lines[name] = append(lines[name], candidate{lease: rest[i+1:], rev: kv.CreateRevision, key: string(kv.Key)})
	}
	for _, line := range lines {
		slices.SortFunc(line, func(a, b candidate) int { return cmp.Compare(a.rev, b.rev) })
	}
	rev := resp.Header.Revision

	e.mu.Lock()
	defer e.mu.Unlock()
	for _, cd := range e.elections {
		if t := cd.term; t != nil && rev >= t.fence.rev && !slices.ContainsFunc(lines[cd.name], func(c candidate) bool {
			return c.key == t.fence.key && c.rev == t.fence.rev
		}) {
			t.end(fmt.Errorf("%w: the key of election %q, term %d, was deleted", leadership.ErrLost, cd.name, t.fence.rev))
		}
	}
	if e.spread && e.sess != nil {
		e.spreadLocked(lines, strconv.FormatInt(int64(e.sess.Lease()), 16))
	}
	return rev, nil
}

// spreadLocked takes one step toward leading as many elections as every
// other replica, give or take one: it hands over one election it leads
// whose next candidate leads at least two fewer, or moves one of its
// campaigns to the back of the line when it stands next behind a leader
// that it could not relieve and a later candidate could. One step at a
// time: nothing while a handover or a move is under way, and each step
// changes the elections, which makes the next review. me is this
// replica's lease. The caller holds e.mu.
func (e *Elector) spreadLocked(lines map[string][]candidate, me string) {
	led := map[string]int{}
	for _, line := range lines {
		led[line[0].lease]++
	}
	names := make([]string, 0, len(e.elections))
	for name, cd := range e.elections {
		if cd.term != nil && cd.term.handingOver() || cd.term == nil && len(cd.requeue) > 0 {
			return // a step under way
		}
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cd, line := e.elections[name], lines[name]
		if len(line) < 2 {
			continue
		}
		switch {
		case cd.term != nil && line[0].key == cd.term.fence.key:
			if led[me]-led[line[1].lease] >= 2 {
				cd.term.end(leadership.ErrHandover)
				return
			}
		case cd.term == nil && line[1].lease == me:
			leader := line[0].lease
			if led[leader]-led[me] >= 2 {
				continue // the leader will hand over to this replica
			}
			for _, c := range line[2:] {
				if led[leader]-led[c.lease] >= 2 {
					cd.requeue <- struct{}{}
					return
				}
			}
		}
	}
}
