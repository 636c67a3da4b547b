package etcd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// decodeShared is decode for a snapshot the state shares (a feed's, which
// its watchers receive): the resource is frozen (see
// resource.Metadata.Freeze), so that any number of readers may read it.
func (c *core) decodeShared(kv *mvccpb.KeyValue) (resource.Resource, error) {
	r, err := c.decode(kv)
	if r != nil {
		r.Metadata().Freeze()
	}
	return r, err
}

// decode opens and decodes the value of key, or returns an error naming
// the key (for a record that does not open, the *atrest.RecordError
// naming the resource and its key ID).
func (c *core) decode(kv *mvccpb.KeyValue) (resource.Resource, error) {
	enc := kv.Value
	if c.sealed || atrest.Framed(enc) {
		ns, typ, id, ok := c.pointerOf(kv.Key)
		if !ok {
			return nil, fmt.Errorf("etcd state: key %q names no resource", kv.Key)
		}
		var err error
		if enc, err = c.sealer.Open(nil, ns, typ, id, enc); err != nil {
			return nil, fmt.Errorf("etcd state: key %q: %w", kv.Key, err)
		}
	}
	r, err := c.reg.Decode(enc)
	if err != nil {
		return nil, fmt.Errorf("etcd state: key %q: %w", kv.Key, err)
	}
	return r, nil
}

// Get implements [state.CoreState]: a linearizable read of the resource.
// The resource is decoded for this call: the caller owns it. The state
// remembers its metadata (see [WithWriteMemory]), so that an Update or
// Destroy made from what Get returned needs no read of its own.
func (c *core) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	var o state.GetOptions
	opt.Apply(&o, opts)
	p := resource.PointerOf(ptr)
	key := c.key(p.Namespace(), p.Type(), p.ID())
	resp, err := c.cli.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("etcd state: get %s: %w", resource.PointerString(p), err)
	}
	if o.Revision != nil {
		*o.Revision = uint64(resp.Header.Revision)
	}
	if len(resp.Kvs) == 0 {
		return nil, state.NewNotFoundError(p, "not found")
	}
	r, err := c.decode(resp.Kvs[0])
	if err == nil {
		c.memory.put(key, r.Metadata().Copy(), resp.Kvs[0].ModRevision)
	}
	return r, err
}

// List implements [state.CoreState]: a linearizable read of the kind,
// sorted by ID. A value that does not decode is left out and logged with
// its key, so that one bad value does not hide the others.
func (c *core) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	_, o, err := backend.ListArgs(kind, opts)
	if err != nil {
		return resource.List{}, err
	}
	kp := c.kindPrefix(kind.Namespace(), kind.Type())
	resp, err := c.cli.Get(ctx, kp, clientv3.WithPrefix())
	if err != nil {
		return resource.List{}, fmt.Errorf("etcd state: list %s: %w", resource.KindString(kind), err)
	}
	if o.Revision != nil {
		*o.Revision = uint64(resp.Header.Revision)
	}
	filtered := backend.Filtered(o.LabelQueries, o.IDQuery)
	items := make([]resource.Resource, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if _, ok := idOf(kp, kv.Key); !ok {
			continue // the kind's head key
		}
		r, err := c.decode(kv)
		if err != nil {
			c.log.Error("resource left out of a list", zap.Error(err))
			continue
		}
		if filtered && !backend.Matches(r, o.LabelQueries, o.IDQuery) {
			continue
		}
		items = append(items, r)
	}
	sortByID(items)
	return resource.List{Items: items}, nil
}

// sortByID sorts resources by ID. Keys sort like IDs unless an ID holds
// an escaped byte ("%" or "/"), so the items are usually sorted already.
func sortByID(items []resource.Resource) {
	cmp := func(a, b resource.Resource) int { return strings.Compare(a.Metadata().ID(), b.Metadata().ID()) }
	if !slices.IsSortedFunc(items, cmp) {
		slices.SortFunc(items, cmp)
	}
}

// encode returns the value to store for r with metadata md, or an error of
// the invalid class (unknown type, spec that does not encode). md is
// frozen first: its accessors then hand out what it holds without
// attaching anything to it (an allocation), and it is what the write
// memory keeps.
func (c *core) encode(r resource.Resource, md *resource.Metadata) ([]byte, error) {
	md.Freeze()
	b, err := c.reg.AppendEncodeWithMetadata(c.encodeBuf(), r, md)
	if err != nil {
		return nil, state.NewInvalidError(resource.NewPointer(md.Namespace(), md.Type(), md.ID()), "%w", err)
	}
	c.encodeSize.Store(int64(len(b)))
	if !c.sealer.Plain(len(b)) {
		if b, err = c.sealer.Seal(nil, md.Namespace(), md.Type(), md.ID(), b); err != nil {
			return nil, fmt.Errorf("etcd state: %s: %w", resource.PointerString(md), err)
		}
	}
	return b, nil
}

// encodeBuf returns an empty buffer with room for a value a little larger
// than the last one encoded, so that encoding does not grow it in steps.
func (c *core) encodeBuf() []byte {
	n := c.encodeSize.Load()
	return make([]byte, 0, min(n+n/4+16, 64<<10))
}

// Create implements [state.CoreState] (rule S1): one transaction that
// writes the resource if its key does not exist.
func (c *core) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	return c.counted(c.create(ctx, r, opts...))
}

func (c *core) create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	md, err := state.ValidateResource(r)
	if err != nil {
		return err
	}
	var o state.CreateOptions
	opt.Apply(&o, opts)
	now := c.stamp()
	smd := md.Copy()
	smd.SetVersion(resource.VersionUndefined.Next())
	smd.SetPhase(resource.PhaseRunning)
	smd.ReplaceOwner(o.Owner)
	smd.SetCreated(now)
	smd.SetUpdated(now)
	val, err := c.encode(r, &smd)
	if err != nil {
		return err
	}
	fc, err := c.fenceOf(ctx)
	if err != nil {
		return err
	}
	key := c.key(md.Namespace(), md.Type(), md.ID())
	resp, err := c.txns.commit(ctx, newWriteTxn(opCreate, unsafeBytes(key), c.headKey(md.Namespace(), md.Type()), 0, val, fc))
	if err != nil {
		return fmt.Errorf("etcd state: create %s: %w", resource.PointerString(md), err)
	}
	if !resp.Succeeded {
		if err := fc.refused(resp, 0, md); err != nil {
			return err
		}
		return state.NewConflictError(resource.PointerOf(md), "already exists")
	}
	c.memory.put(key, smd, resp.Header.Revision)
	c.written(ctx, resource.KindOf(md), resp.Header.Revision)
	md.SetVersion(smd.Version())
	md.SetCreated(now)
	md.SetUpdated(now)
	return nil
}

// current is the stored state of a key as a write expects it.
type current struct {
	md      resource.Metadata // the stored metadata when present; read only
	mod     int64             // the key's mod revision
	present bool              // the key exists
	fresh   bool              // read from etcd, not from a feed or the write memory
}

// expected returns the state of the key a write expects, with no round
// trip when it is known: the newer of the running feed's copy and the
// write memory's entry (see [WithWriteMemory]); else read from etcd.
func (c *core) expected(ctx context.Context, p resource.Pointer, key string) (current, error) {
	res, mod, fed := c.cached(resource.PointerOf(p))
	if e, ok := c.memory.get(key); ok && (!fed || res == nil || e.mod > mod) {
		return current{md: e.md, mod: e.mod, present: true}, nil
	}
	if !fed {
		return c.readCurrent(ctx, p, key)
	}
	if res == nil {
		return current{}, nil
	}
	return current{md: *res.Metadata(), mod: mod, present: true}, nil
}

// readCurrent reads the key from etcd.
func (c *core) readCurrent(ctx context.Context, p resource.Pointer, key string) (current, error) {
	resp, err := c.cli.Get(ctx, key)
	if err != nil {
		return current{}, fmt.Errorf("etcd state: read %s: %w", resource.PointerString(p), err)
	}
	return c.currentOf(key, resp.Kvs)
}

// currentOf decodes the result of a read of one key, and remembers it in
// the write memory.
func (c *core) currentOf(key string, kvs []*mvccpb.KeyValue) (current, error) {
	if len(kvs) == 0 {
		return current{fresh: true}, nil
	}
	r, err := c.decode(kvs[0])
	if err != nil {
		return current{}, err
	}
	md := r.Metadata()
	c.memory.put(key, *md, kvs[0].ModRevision)
	return current{md: *md, mod: kvs[0].ModRevision, present: true, fresh: true}, nil
}

// Update implements [state.CoreState] (rule S2): it checks the caller's
// version, incarnation, owner and phase against the stored resource and
// writes with a transaction that succeeds only if the key was not written
// since. The stored resource it expects is the kind's running feed's or
// the write memory's when either knows the key (one round trip), else read
// first; a check that fails on such a copy is made again on a fresh read,
// and a transaction that fails returns the newer value, on which the
// checks run again.
func (c *core) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	return c.counted(c.update(ctx, r, opts...))
}

// updateOptions lends update its options value (see opt.ApplyPooled).
var updateOptions opt.Pool[state.UpdateOptions]

// phaseRunning is the expected phase of the default update options: every
// call's options share it, and none writes through the pointer.
var phaseRunning = resource.PhaseRunning

func (c *core) update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	md, err := state.ValidateResource(r)
	if err != nil {
		return err
	}
	o := opt.ApplyPooled(&updateOptions, state.UpdateOptions{ExpectedPhase: &phaseRunning}, opts)
	if c.isShared(r) {
		return state.NewInvalidError(resource.PointerOf(md), "update of a shared read-only snapshot: DeepCopy it first (rule S7)")
	}
	fc, err := c.fenceOf(ctx)
	if err != nil {
		return err
	}
	key := c.key(md.Namespace(), md.Type(), md.ID())
	cur, err := c.expected(ctx, md, key)
	for err == nil {
		if cerr := checkUpdate(md, cur, o); cerr != nil {
			if !cur.fresh {
				cur, err = c.readCurrent(ctx, md, key)
				continue
			}
			return cerr
		}
		smd := c.updated(md, &cur.md)
		val, eerr := c.encode(r, &smd)
		if eerr != nil {
			return eerr
		}
		tx, terr := c.txns.commit(ctx, newWriteTxn(opUpdate, unsafeBytes(key), c.headKey(md.Namespace(), md.Type()), cur.mod, val, fc))
		if terr != nil {
			return fmt.Errorf("etcd state: update %s: %w", resource.PointerString(md), terr)
		}
		if ferr := fc.refused(tx, 1, md); ferr != nil {
			return ferr
		}
		if tx.Succeeded {
			c.memory.put(key, smd, tx.Header.Revision)
			c.written(ctx, resource.KindOf(md), tx.Header.Revision)
			md.SetVersion(smd.Version())
			md.SetCreated(smd.Created())
			md.SetUpdated(smd.Updated())
			return nil
		}
		c.counters.Races.Add(1)
		cur, err = c.currentOf(key, tx.Responses[0].GetResponseRange().Kvs)
	}
	return err
}

// updated returns the metadata an Update of md stores over the stored
// cmd: md's, with the next version, cmd's owner and creation time, and
// the time of the write.
func (c *core) updated(md, cmd *resource.Metadata) resource.Metadata {
	smd := md.Copy()
	smd.SetVersion(cmd.Version().Next())
	smd.ReplaceOwner(cmd.Owner())
	smd.SetCreated(cmd.Created())
	smd.SetUpdated(c.stamp())
	return smd
}

// checkUpdate reports why md may not replace cur, in the order of the
// in-memory state: version, incarnation, owner, phase.
func checkUpdate(md *resource.Metadata, cur current, o state.UpdateOptions) error {
	if !cur.present {
		return state.NewNotFoundError(resource.PointerOf(md), "not found")
	}
	return backend.CheckUpdate(md, &cur.md, o)
}

// Destroy implements [state.CoreState] (rule S3): check owner and
// finalizers, then delete with a transaction conditioned like Update's.
func (c *core) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	_, err := c.DestroyVersion(ctx, ptr, opts...)
	return err
}

// DestroyVersion is Destroy returning the version it destroyed (see
// [state.CommitReporter]).
func (c *core) DestroyVersion(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	v, err := c.destroy(ctx, ptr, opts...)
	return v, c.counted(err)
}

func (c *core) destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) (resource.Version, error) {
	none := resource.VersionUndefined
	if err := resource.ValidatePointer(ptr); err != nil {
		return none, err
	}
	p := resource.PointerOf(ptr)
	var o state.DestroyOptions
	opt.Apply(&o, opts)
	fc, err := c.fenceOf(ctx)
	if err != nil {
		return none, err
	}
	key := c.key(p.Namespace(), p.Type(), p.ID())
	cur, err := c.expected(ctx, p, key)
	for err == nil {
		if cerr := checkDestroy(p, cur, o); cerr != nil {
			if !cur.fresh {
				cur, err = c.readCurrent(ctx, p, key)
				continue
			}
			return none, cerr
		}
		tx, terr := c.txns.commit(ctx, newWriteTxn(opDestroy, unsafeBytes(key), c.headKey(p.Namespace(), p.Type()), cur.mod, nil, fc))
		if terr != nil {
			return none, fmt.Errorf("etcd state: destroy %s: %w", resource.PointerString(p), terr)
		}
		if ferr := fc.refused(tx, 1, p); ferr != nil {
			return none, ferr
		}
		if tx.Succeeded {
			c.memory.forget(key, tx.Header.Revision)
			c.written(ctx, p.Kind(), tx.Header.Revision)
			return cur.md.Version(), nil
		}
		c.counters.Races.Add(1)
		cur, err = c.currentOf(key, tx.Responses[0].GetResponseRange().Kvs)
	}
	return none, err
}

// checkDestroy reports why cur may not be destroyed: absent, another
// owner, pending finalizers.
func checkDestroy(p resource.Pointer, cur current, o state.DestroyOptions) error {
	if !cur.present {
		return state.NewNotFoundError(p, "not found")
	}
	cmd := &cur.md
	if cmd.Owner() != o.Owner {
		return state.NewOwnerConflictError(p, "owner is %q, not %q", cmd.Owner(), o.Owner)
	}
	if !cmd.Finalizers().Empty() {
		return state.NewPendingFinalizersError(p, "finalizers pending: %v", slices.Clone(*cmd.Finalizers()))
	}
	return nil
}
