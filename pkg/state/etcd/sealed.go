package etcd

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// plainSealer is the sealer of a state made without WithSealer: it stores
// records as encoded, reads compressed ones, and refuses encrypted ones
// naming their key.
func plainSealer() *atrest.Sealer {
	s, err := atrest.New(context.Background(), atrest.Config{})
	if err != nil {
		panic("etcd state: the plain sealer: " + err.Error()) // no provider: cannot fail
	}
	return s
}

// keyChecksPrefix is the prefix of the key checks of a state's keys
// (atrest.KeySet.KeyCheck): no kind's key is under prefix + "%".
func (c *core) keyChecksPrefix() string { return c.prefix + "%keycheck/" }

// keyChecks reads the key checks kept under the prefix.
func (c *core) keyChecks(ctx context.Context) (map[string][]byte, error) {
	resp, err := c.cli.Get(ctx, c.keyChecksPrefix(), clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd state: read the key checks: %w", err)
	}
	checks := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		checks[string(kv.Key[len(c.keyChecksPrefix()):])] = kv.Value
	}
	return checks, nil
}

// keepKeyCheck keeps the check of ks's writing key, unless one is kept
// (by this process or another).
func (c *core) keepKeyCheck(ctx context.Context, ks *atrest.KeySet) error {
	check, err := ks.KeyCheck()
	if err != nil {
		return err
	}
	key := c.keyChecksPrefix() + ks.WriteKeyID()
	_, err = c.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).Then(clientv3.OpPut(key, string(check))).Commit()
	if err != nil {
		return fmt.Errorf("etcd state: keep the key check of %q: %w", ks.WriteKeyID(), err)
	}
	return nil
}

// checkRecords is New's check of the stored records: the sealer's keys
// against the key checks (a wrong key refuses the state), every record
// opened — one of a key the sealer lacks refuses the state, one that does
// not open refuses it in strict mode and is reported in lenient mode —
// and, once all passed, the writing key's check kept. A state that does not encrypt
// reads the records only when the prefix has key checks (it may hold
// encrypted records).
func (c *core) checkRecords(ctx context.Context) error {
	checks, err := c.keyChecks(ctx)
	if err != nil {
		return err
	}
	ks := c.sealer.Keys()
	if err := ks.VerifyAll(func(id string) []byte { return checks[id] }); err != nil {
		return err
	}
	if ks == nil && len(checks) == 0 {
		return nil
	}
	err = c.scan(ctx, func(kv *mvccpb.KeyValue, ns, typ, id string) error {
		_, err := c.sealer.Open(nil, ns, typ, id, kv.Value)
		return c.recordProblem(kv, err)
	})
	if err != nil || ks == nil {
		return err
	}
	return c.keepKeyCheck(ctx, ks) // the first write of the check's key comes after it
}

// recordProblem is what a check of the records does with a record that
// does not open: one of a key the sealer lacks is a *atrest.KeyError
// naming the key ID (in every mode); any other is an error naming the
// key (wrapping the *atrest.RecordError) in strict mode, and is reported
// (nil) in lenient mode.
func (c *core) recordProblem(kv *mvccpb.KeyValue, err error) error {
	var re *atrest.RecordError
	if !errors.As(err, &re) {
		return err
	}
	if errors.Is(err, atrest.ErrKeyMissing) {
		return &atrest.KeyError{KeyID: re.KeyID, Err: atrest.ErrKeyMissing, Cause: fmt.Errorf("etcd state: key %q", kv.Key)}
	}
	err = fmt.Errorf("etcd state: key %q: %w", kv.Key, err)
	if c.sealer.Lenient() {
		c.sealer.Report(err)
		return nil
	}
	return err
}

// scanPage is how many keys a scan reads per request.
const scanPage = 512

// scan calls fn with every record under the prefix (not the kinds' head
// keys, nor the keys under prefix + "%"), in key order, a page at a time,
// and stops at fn's first error.
func (c *core) scan(ctx context.Context, fn func(kv *mvccpb.KeyValue, ns, typ, id string) error) error {
	from, end := c.prefix, clientv3.GetPrefixRangeEnd(c.prefix)
	for {
		resp, err := c.cli.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(scanPage))
		if err != nil {
			return fmt.Errorf("etcd state: read the records: %w", err)
		}
		for _, kv := range resp.Kvs {
			if ns, typ, id, ok := c.pointerOf(kv.Key); ok {
				if err := fn(kv, ns, typ, id); err != nil {
					return err
				}
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
