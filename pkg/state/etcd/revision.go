package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.RevisionReporter = (*core)(nil)

// Revision implements [state.RevisionReporter] with etcd's revisions: one
// sequence for the whole cluster (every key under any prefix moves it, so
// revisions of a kind's changes are increasing but not consecutive). It
// is the cluster's revision as of a linearizable read: every write that
// returned before the call has a revision no higher.
func (c *core) Revision(ctx context.Context) (uint64, error) {
	resp, err := c.cli.Get(ctx, c.prefix, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd state: revision: %w", err)
	}
	return uint64(resp.Header.Revision), nil
}

// KindRevision implements [state.RevisionReporter]: the mod revision of
// the kind's head key, which every write of the kind puts in its
// transaction (the revision of its newest change, deletions included; 0
// when the kind was never written), and the cluster's revision of the
// same linearizable read. A key written to etcd by other means than this
// package is not accounted for.
func (c *core) KindRevision(ctx context.Context, kind resource.Kind) (last, at uint64, err error) {
	if err := resource.ValidateKind(kind); err != nil {
		return 0, 0, err
	}
	resp, err := c.cli.Get(ctx, c.kindPrefix(kind.Namespace(), kind.Type()))
	if err != nil {
		return 0, 0, fmt.Errorf("etcd state: kind revision of %s: %w", resource.KindString(kind), err)
	}
	if len(resp.Kvs) > 0 {
		last = uint64(resp.Kvs[0].ModRevision)
	}
	return last, uint64(resp.Header.Revision), nil
}
