package etcd

import (
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// DefaultPrefix is the key prefix of a state unless [WithPrefix] says
// otherwise.
const DefaultPrefix = "/resgraph/"

// DefaultHistoryCapacity is the number of changes a state keeps in memory
// per watched kind unless [WithHistoryCapacity] says otherwise.
const DefaultHistoryCapacity = 4096

// DefaultConnectTimeout bounds how long [New] waits for etcd unless
// [WithConnectTimeout] says otherwise.
const DefaultConnectTimeout = 10 * time.Second

// Option configures [New].
type Option func(*options)

type options struct {
	prefix         string
	logger         *zap.Logger
	historyCap     int
	connectTimeout time.Duration
	counters       *Counters
	sealer         *atrest.Sealer
	rotationBatch  int
	writeMemory    int
}

func defaultOptions() options {
	return options{
		prefix:         DefaultPrefix,
		logger:         zap.NewNop(),
		historyCap:     DefaultHistoryCapacity,
		connectTimeout: DefaultConnectTimeout,
		rotationBatch:  DefaultRotationBatch,
		writeMemory:    DefaultWriteMemory,
	}
}

// WithPrefix sets the prefix of every key the state reads and writes.
// States with different prefixes share nothing; an empty prefix is the
// default one.
func WithPrefix(prefix string) Option {
	return func(o *options) {
		if prefix != "" {
			o.prefix = prefix
		}
	}
}

// WithLogger sets the logger of the state's background work (watch
// restarts, values that do not decode). A nil logger logs nothing.
func WithLogger(l *zap.Logger) Option {
	return func(o *options) {
		if l == nil {
			l = zap.NewNop()
		}
		o.logger = l
	}
}

// WithHistoryCapacity sets how many changes of a watched kind the state
// keeps in memory: the reach of tail events and bookmarks (rule S11), and
// how far a watcher may fall behind before its backlog is coalesced (rule
// S12). n is clamped to [1, 1<<24].
func WithHistoryCapacity(n int) Option {
	return func(o *options) { o.historyCap = min(max(n, 1), 1<<24) }
}

// WithConnectTimeout bounds how long [New] waits for etcd to answer before
// it fails. A non-positive duration is the default.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.connectTimeout = d
		}
	}
}

// WithSealer makes the state store its records as s says (package
// atrest): compressed above s's threshold, and encrypted with its keys,
// the first of which writes (see "Encryption and compression" in the
// package documentation). Every process that shares the prefix needs the
// same keys. A nil s is no sealer.
func WithSealer(s *atrest.Sealer) Option {
	return func(o *options) { o.sealer = s }
}

// DefaultRotationBatch is the number of records [Rotate] rewrites per
// etcd transaction unless [WithRotationBatch] says otherwise.
const DefaultRotationBatch = 32

// WithRotationBatch sets how many records [Rotate] rewrites per etcd
// transaction (n is clamped to [1, 64]: a transaction holds a comparison
// and a put per record).
func WithRotationBatch(n int) Option {
	return func(o *options) { o.rotationBatch = min(max(n, 1), 64) }
}
