package etcd

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// New returns a [state.State] on the etcd cluster that cli talks to,
// keeping the resources under the prefix of [WithPrefix] encoded by reg.
// It checks that etcd answers within the timeout of [WithConnectTimeout]
// (and ctx) and fails with an error naming the endpoints otherwise.
//
// The state starts no goroutine of its own: each watched kind runs one
// goroutine and one etcd watch while it has watchers. The client stays the
// caller's to close, after the state's last use.
func New(ctx context.Context, cli *clientv3.Client, reg *codec.Registry, opts ...Option) (state.State, error) {
	c, err := newCore(ctx, cli, reg, opts...)
	if err != nil {
		return nil, err
	}
	return state.WrapCore(c), nil
}

// core implements [state.CoreState] on etcd.
type core struct {
	// KindWatches is WatchKind and WatchKindAggregated, shared with the
	// inmem state; its Start is startKindWatch.
	backend.KindWatches
	cli        *clientv3.Client
	reg        *codec.Registry
	prefix     string
	log        *zap.Logger
	historyCap int
	clusterID  uint64
	counters   *Counters // never nil
	// sealer seals and opens the records (never nil); sealed tells that
	// it encrypts, so that every record goes through it.
	sealer *atrest.Sealer
	sealed bool
	// memory remembers what the keys this state wrote store (never nil).
	memory *writeMemory
	// txns sends the writes' transactions (see txnSender).
	txns txnSender
	// encodeSize is the size of the last value encoded (see encodeBuf).
	encodeSize atomic.Int64
	// prefixes caches the kinds' key prefixes (see kindPrefix).
	prefixes kindPrefixes

	mu sync.Mutex
	// feeds are the running watches of the kinds with watchers. Guarded
	// by mu.
	feeds map[resource.KindKey]*feed
	// lastStamp is the newest timestamp given to a write, so that
	// timestamps of this state strictly increase. Guarded by mu.
	lastStamp time.Time
}

var _ state.CoreState = (*core)(nil)

func newCore(ctx context.Context, cli *clientv3.Client, reg *codec.Registry, opts ...Option) (*core, error) {
	if cli == nil || reg == nil {
		return nil, state.NewInvalidError(nil, "etcd state: nil client or registry")
	}
	o := defaultOptions()
	opt.Apply(&o, opts)
	pctx, cancel := context.WithTimeout(ctx, o.connectTimeout)
	defer cancel()
	resp, err := cli.Get(pctx, o.prefix, clientv3.WithCountOnly())
	if err != nil {
		return nil, fmt.Errorf("etcd state: etcd at %v did not answer within %s: %w", cli.Endpoints(), o.connectTimeout, err)
	}
	if o.counters == nil {
		o.counters = &Counters{}
	}
	if o.sealer == nil {
		o.sealer = plainSealer()
	}
	c := &core{
		counters:   o.counters,
		cli:        cli,
		reg:        reg,
		prefix:     o.prefix,
		log:        o.logger,
		historyCap: o.historyCap,
		clusterID:  resp.Header.GetClusterId(),
		feeds:      map[resource.KindKey]*feed{},
		sealer:     o.sealer,
		sealed:     o.sealer.Encrypts(),
		memory:     newWriteMemory(o.writeMemory),
		txns:       newTxnSender(cli),
	}
	c.KindWatches = backend.KindWatches{Start: c.startKindWatch}
	if err := c.checkRecords(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// stamp returns the time of a write: now, or just after the previous
// stamp when the clock did not move (or went back).
func (c *core) stamp() time.Time {
	now := time.Now().Round(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.After(c.lastStamp) {
		now = c.lastStamp.Add(time.Nanosecond)
	}
	c.lastStamp = now
	return now
}
