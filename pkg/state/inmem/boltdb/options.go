package boltdb

import (
	"time"

	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// Option configures [Open].
type Option func(*options)

type options struct {
	// interval is zero in the default policy (a write returns after its
	// fsync), else the longest a write waits to be committed.
	interval time.Duration
	// maxPending is the size at which a batch is committed without
	// waiting for the interval, and past which its writers wait for its
	// commit (interval policy).
	maxPending  int
	lockTimeout time.Duration
	stateOpts   []inmem.Option
	// sealer seals the records (nil: stored as encoded).
	sealer        *atrest.Sealer
	rotationBatch int
	// rotated is told of each rotation batch committed (tests).
	rotated func(rewritten int)
}

// DefaultLockTimeout is how long [Open] waits for the file's lock by
// default: not at all (a file in use is refused at once).
const DefaultLockTimeout = time.Duration(0)

// DefaultMaxPending is the default bound of [WithInterval]'s unsynced
// writes.
const DefaultMaxPending = 4096

// DefaultRotationBatch is the number of records a rotation rewrites per
// transaction unless [WithRotationBatch] says otherwise.
const DefaultRotationBatch = 256

func defaultOptions() options {
	return options{maxPending: DefaultMaxPending, lockTimeout: DefaultLockTimeout, rotationBatch: DefaultRotationBatch}
}

// WithInterval selects the interval policy: a write returns as soon as it
// is applied in memory and queued, and the queued writes are committed,
// in one transaction, within d of the first of them being queued (plus
// the time of a commit still running then), or as soon as maxPending of
// them are queued. While a commit runs, the next batch fills; a writer
// that finds more than maxPending writes queued there waits for their
// commit (back pressure), so that at most about 2×maxPending writes (plus
// one per concurrent writer) are ever unsynced. A crash loses the writes
// of the last d or so (at most those of the batch being filled and of the
// commit in progress); what the file keeps is still a prefix of the
// changes in the state's order. d <= 0 selects the default policy (every
// write returns after the fsync of its commit); maxPending <= 0 means
// [DefaultMaxPending].
func WithInterval(d time.Duration, maxPending int) Option {
	return func(o *options) {
		o.interval = max(d, 0)
		o.maxPending = maxPending
		if maxPending <= 0 {
			o.maxPending = DefaultMaxPending
		}
	}
}

// WithLockTimeout sets how long [Open] waits for a file that another
// state holds open to be closed (default [DefaultLockTimeout]: not at
// all) before it fails with [ErrLocked]; a restarted daemon whose
// previous run may still be exiting can wait a little. d <= 0 means the
// default.
func WithLockTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.lockTimeout = d
		}
	}
}

// WithStateOptions passes options to the in-memory state
// ([inmem.NewState]): history capacity, mutation detector.
// [inmem.WithPersistence] among them is overridden.
func WithStateOptions(opts ...inmem.Option) Option {
	return func(o *options) { o.stateOpts = append(o.stateOpts, opts...) }
}

// WithSealer makes the state store its records as s says (package
// atrest): compressed above s's threshold, and encrypted with its keys,
// the first of which writes. Open then checks the keys against the key
// checks the file keeps and reads every record with s: a wrong key, or a
// key that records need and s lacks, refuses the file naming the key ID
// (in every mode); a record that does not open refuses the file in strict
// mode and is left out, and reported, in lenient mode (see
// [atrest.Config]). Without it, records are stored as encoded, and a file
// holding encrypted records is refused naming their key ID. A nil s is no
// sealer.
func WithSealer(s *atrest.Sealer) Option {
	return func(o *options) { o.sealer = s }
}

// WithRotationBatch sets how many records a rotation ([State.Rotate])
// rewrites per transaction (default [DefaultRotationBatch]): the longest
// a commit of writes waits behind a rotation is that of one such
// transaction. n <= 0 means the default.
func WithRotationBatch(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.rotationBatch = n
		}
	}
}
