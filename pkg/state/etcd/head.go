package etcd

import (
	"context"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.KindHeadReporter = (*core)(nil)

// KindHead implements [state.KindHeadReporter]: the bookmark that a whole
// kind watch of this state holds on its last event once it has received
// every change written to the kind before the call, by this process or
// any other through a state of this package (a key written to etcd by
// other means is seen when its change arrives, not waited for). It reads
// the revision of the kind's newest change from etcd (one linearizable
// read), waits until the kind's watch has applied it, and returns the
// position of the newest change the watch holds. Without a running watch
// of the kind it starts one for the call.
func (c *core) KindHead(ctx context.Context, kind resource.Kind) (state.Bookmark, error) {
	if err := resource.ValidateKind(kind); err != nil {
		return nil, err
	}
	k := resource.KindOf(kind)
	f, err := c.acquire(ctx, k)
	if err != nil {
		return nil, err
	}
	defer c.release(f)
	resp, err := c.cli.Get(ctx, c.kindPrefix(k.Namespace(), k.Type()))
	if err != nil {
		return nil, fmt.Errorf("etcd state: kind head of %s: %w", resource.KindString(kind), err)
	}
	var rev int64
	if len(resp.Kvs) > 0 {
		rev = resp.Kvs[0].ModRevision
	}
	if err := f.waitApplied(ctx, rev); err != nil {
		return nil, fmt.Errorf("etcd state: kind head of %s: %w", resource.KindString(kind), err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return c.bookmark(f.last), nil
}
