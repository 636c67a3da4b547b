package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// rotationPasses bounds the passes of a rotation: a pass after the first
// finds only records written with an older key by writers that had
// sealed them before the switch, or by processes that still write with
// it.
const rotationPasses = 4

// Rotate rewrites every record under the prefix of [WithPrefix] with the
// first key of the provider of [WithSealer]'s sealer (rule P3): it asks
// the provider for its keys again (put the new key first, keep the old
// ones) and verifies them against the key checks kept under the prefix;
// then the sealer writes with the new key (a state of this process that
// shares the sealer writes with it at once), and every record under
// another key (or not encrypted, with atrest.Config.ReadPlaintext) is
// rewritten, [WithRotationBatch] records per etcd transaction, each on
// the condition that it did not change since it was read (a record a
// writer changed meanwhile is left to the writer, who wrote it with the
// new key, or to the next pass). Watchers see no change: a rewritten
// record holds the same resource, and the feeds skip it.
//
// Every record is readable throughout, by every process that has the old
// and the new keys: give them all the new list before rotating. A
// rotation stopped (ctx) or cut by a crash leaves records under both
// keys; Rotate again resumes it (a record under the first key is not
// rewritten). It fails, changing nothing, with a *atrest.KeyError when
// there is no sealer or provider (atrest.ErrNoKeys), the provider fails
// or gives bad keys, a key is not the one that wrote under its ID
// (atrest.ErrWrongKey), or every record is already under the first key
// (atrest.ErrNoNewKey). A record that does not open stops it, naming the
// record, in strict mode; in lenient mode it is left as it is and
// reported. Records still under older keys after a few passes (a
// process writing with the old keys) fail it with an error saying so.
func Rotate(ctx context.Context, cli *clientv3.Client, opts ...Option) error {
	o := defaultOptions()
	opt.Apply(&o, opts)
	if cli == nil || o.sealer == nil {
		return &atrest.KeyError{Err: atrest.ErrNoKeys, Cause: errors.New("etcd state: Rotate needs a client and WithSealer")}
	}
	c := &core{cli: cli, prefix: o.prefix, log: o.logger, sealer: o.sealer, sealed: true, counters: &Counters{}}
	ks, err := c.sealer.LoadKeys(ctx)
	if err != nil {
		return err
	}
	if ks == nil {
		return &atrest.KeyError{Err: atrest.ErrNoKeys, Cause: errors.New("etcd state: the sealer has no key provider")}
	}
	checks, err := c.keyChecks(ctx)
	if err != nil {
		return err
	}
	if err := ks.VerifyAll(func(id string) []byte { return checks[id] }); err != nil {
		return err
	}
	if n, err := c.countStale(ctx, ks); err != nil || n == 0 {
		if err == nil {
			err = &atrest.KeyError{KeyID: ks.WriteKeyID(), Err: atrest.ErrNoNewKey}
		}
		return err
	}
	if err := c.keepKeyCheck(ctx, ks); err != nil {
		return err
	}
	c.sealer.Use(ks)
	return c.rotate(ctx, o.rotationBatch)
}

// countStale counts the records not under ks's writing key.
func (c *core) countStale(ctx context.Context, ks *atrest.KeySet) (int, error) {
	n := 0
	err := c.scan(ctx, func(kv *mvccpb.KeyValue, _, _, _ string) error {
		if ks.Stale(kv.Value) {
			n++
		}
		return nil
	})
	return n, err
}

// rotate runs passes until one rewrites nothing.
func (c *core) rotate(ctx context.Context, batch int) error {
	skipped := map[string]bool{} // records that do not open (lenient)
	for range rotationPasses {
		n, err := c.rotatePass(ctx, batch, skipped)
		if err != nil || n == 0 {
			return err
		}
	}
	return fmt.Errorf("etcd state: rotation to key %q: records are still written with older keys after %d passes: give every process that shares the prefix the new keys first, then rotate again", c.sealer.WriteKeyID(), rotationPasses)
}

// rotatePass rewrites the stale records in key order, batch records per
// transaction, and returns how many it rewrote.
func (c *core) rotatePass(ctx context.Context, batch int, skipped map[string]bool) (int, error) {
	var pending []*mvccpb.KeyValue
	var values [][]byte
	total := 0
	flush := func() error {
		n, err := c.rewrite(ctx, pending, values)
		total += n
		pending, values = pending[:0], values[:0]
		return err
	}
	err := c.scan(ctx, func(kv *mvccpb.KeyValue, ns, typ, id string) error {
		if skipped[string(kv.Key)] || !c.sealer.Stale(kv.Value) {
			return nil
		}
		nv, err := c.sealer.Reseal(ns, typ, id, kv.Value)
		if err != nil {
			if perr := c.recordProblem(kv, err); perr != nil {
				return perr
			}
			skipped[string(kv.Key)] = true
			return nil
		}
		pending, values = append(pending, kv), append(values, nv)
		if len(pending) < batch {
			return nil
		}
		return flush()
	})
	if err == nil && len(pending) > 0 {
		err = flush()
	}
	return total, err
}

// rewrite puts values on the keys of kvs in one transaction, on the
// condition that none changed since read; when one did, each is put on
// its own condition. It returns how many it put.
func (c *core) rewrite(ctx context.Context, kvs []*mvccpb.KeyValue, values [][]byte) (int, error) {
	cmps := make([]clientv3.Cmp, len(kvs))
	puts := make([]clientv3.Op, len(kvs))
	for i, kv := range kvs {
		cmps[i] = clientv3.Compare(clientv3.ModRevision(string(kv.Key)), "=", kv.ModRevision)
		puts[i] = clientv3.OpPut(string(kv.Key), string(values[i]))
	}
	resp, err := c.cli.Txn(ctx).If(cmps...).Then(puts...).Commit()
	if err != nil {
		return 0, fmt.Errorf("etcd state: rotation: %w", err)
	}
	if resp.Succeeded {
		return len(kvs), nil
	}
	n := 0
	for i := range kvs {
		resp, err := c.cli.Txn(ctx).If(cmps[i]).Then(puts[i]).Commit()
		if err != nil {
			return n, fmt.Errorf("etcd state: rotation: %w", err)
		}
		if resp.Succeeded {
			n++
		}
	}
	return n, nil
}
