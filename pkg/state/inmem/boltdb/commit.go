package boltdb

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// Group commit. The state calls store.Append for every write, under the
// written kind's lock, in the order of the kind's changes; Append encodes
// the resource and adds it to the open batch under the store's own short
// lock, so the batch holds the changes of all kinds in an order
// consistent with each kind's. The committer goroutine takes the open
// batch as a whole (a new one opens at once) and commits it in one bbolt
// transaction; the writers of the batch wait on it (default policy) or
// not (interval policy). While one commit runs, the next batch fills: one
// transaction serves every write that arrived meanwhile. Batches are
// committed one at a time, in order, so what the file holds after any
// commit is a prefix of the changes.

// change is one write of a batch: the key, and the encoding of the
// resource (nil for a destroy).
type change struct {
	ns    resource.Namespace
	typ   resource.Type
	id    resource.ID
	value []byte
}

// batch is the changes committed by one transaction. It is the Pending
// of the writes that wait for it.
type batch struct {
	changes []change
	// floor is the latest creation time of the batch's creates (zero
	// when none).
	floor time.Time
	// done is closed once the commit is over; err is its error then.
	done chan struct{}
	err  error
}

func newBatch() *batch { return &batch{done: make(chan struct{})} }

// Wait implements inmem.Pending: it returns once the batch is committed,
// with the commit's error.
func (b *batch) Wait() error {
	<-b.done
	return b.err
}

// queued is the Pending of a write of the interval policy: it does not
// wait.
type queued struct{}

func (queued) Wait() error { return nil }

// store implements inmem.Persistence on a bbolt file.
type store struct {
	db         *bbolt.DB
	reg        *codec.Registry
	sealer     *atrest.Sealer
	contents   *contents
	interval   time.Duration
	maxPending int

	mu sync.Mutex
	// open is the batch being filled. Guarded by mu.
	open *batch
	// refusal is what Append returns once the store refuses writes
	// (ErrClosed, or a *CommitError). Guarded by mu.
	refusal error

	// kick tells the committer that the open batch has its first change;
	// full, that it reached maxPending (interval policy).
	kick, full chan struct{}
	// stop ends the committer once it committed the open batch; done is
	// closed when it has exited.
	stop, done chan struct{}

	// rot is the key rotation's (rotation.go).
	rot rotationState

	// Counters (see Stats); committing is the size of the batch being
	// committed (0 between commits); rotatedRecords counts the records
	// rotations rewrote.
	commits, writes, rotatedRecords atomic.Uint64
	committing                      atomic.Int64
	commitTime                      atomic.Int64
	// failure is the first commit error (see Close).
	failure atomic.Pointer[CommitError]
}

var (
	_ inmem.Persistence   = (*store)(nil)
	_ state.TypeValidator = (*store)(nil)
)

func newStore(db *bbolt.DB, reg *codec.Registry, c *contents, o options) *store {
	return &store{
		db: db, reg: reg, sealer: o.sealer, contents: c, interval: o.interval, maxPending: o.maxPending,
		open: newBatch(),
		kick: make(chan struct{}, 1), full: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}),
		rot: newRotationState(o),
	}
}

// Restore implements inmem.Persistence.
func (s *store) Restore() inmem.Restored {
	r := s.contents.restored()
	s.contents = nil // the state owns the resources now
	return r
}

// ValidateType implements state.TypeValidator: the file stores the types
// the codec registry knows.
func (s *store) ValidateType(kind resource.Kind) error {
	if err := s.reg.ValidateType(kind.Type()); err != nil {
		return fmt.Errorf("boltdb: %w", err)
	}
	return nil
}

// Append implements inmem.Persistence. It encodes r and adds the change
// to the open batch; it never blocks but on the store's short lock.
func (s *store) Append(ns resource.Namespace, typ resource.Type, id resource.ID, r resource.Resource) (inmem.Pending, error) {
	if keySize(ns, typ, id) > maxKeySize {
		return nil, state.NewInvalidError(resource.NewPointer(ns, typ, id), "boltdb: namespace, type and ID together exceed %d bytes", maxKeySize)
	}
	var value []byte
	var created time.Time
	if r != nil {
		var err error
		if value, err = s.reg.Encode(r); err != nil {
			return nil, err
		}
		if !s.sealer.Plain(len(value)) {
			if value, err = s.sealer.Seal(nil, ns, typ, id, value); err != nil {
				return nil, err
			}
		}
		if len(value) > maxValueSize {
			return nil, state.NewInvalidError(resource.NewPointer(ns, typ, id), "boltdb: encoding of %d bytes exceeds %d", len(value), maxValueSize)
		}
		if md := r.Metadata(); md.Version().Value() == 1 { // a create
			created = md.Created()
		}
	}
	s.mu.Lock()
	if s.refusal != nil {
		err := s.refusal
		s.mu.Unlock()
		return nil, err
	}
	b := s.open
	b.changes = append(b.changes, change{ns: ns, typ: typ, id: id, value: value})
	if created.After(b.floor) {
		b.floor = created
	}
	n := len(b.changes)
	s.mu.Unlock()

	if n == 1 {
		signal(s.kick)
	}
	if s.interval == 0 {
		return b, nil
	}
	switch {
	case n == s.maxPending:
		signal(s.full) // commit now, or once the running commit is done
	case n > s.maxPending:
		// The committer is busy with the previous batch while this one
		// overflows: back pressure, wait for this one's commit.
		return b, nil
	}
	return queued{}, nil
}

// signal sends on a channel of capacity 1 unless a signal is pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// run is the committer: it commits the open batch whenever it has
// changes (at once under the default policy; after the interval, or when
// full, under the interval policy), until stop, when it commits what is
// left and exits.
func (s *store) run() {
	defer close(s.done)
	for {
		stopping := false
		select {
		case <-s.kick:
		case <-s.stop:
			stopping = true
		}
		if !stopping && s.interval > 0 {
			stopping = s.await()
		}
		if !stopping && s.interval == 0 {
			// The writers the previous commit released are runnable but
			// have not queued their next writes yet: letting them run
			// first gives a commit more writes when every writer waits
			// (docs/performance.md, "The committer's yield"). It is a
			// yield, not a wait: nothing depends on it.
			runtime.Gosched()
		}
		s.mu.Lock()
		b := s.open
		if len(b.changes) > 0 {
			s.open = newBatch()
		}
		// Drop a signal of the batch just taken (while no change of the
		// new one can have sent one); one sent after this by a writer of
		// the taken batch only makes the next commit early.
		select {
		case <-s.full:
		default:
		}
		s.mu.Unlock()
		if len(b.changes) > 0 {
			s.commitBatch(b)
		}
		if stopping {
			return
		}
	}
}

// await waits for the interval to elapse, the batch to fill up or stop;
// it reports whether stop was asked.
func (s *store) await() bool {
	s.mu.Lock()
	full := len(s.open.changes) >= s.maxPending
	s.mu.Unlock()
	if full {
		return false
	}
	t := time.NewTimer(s.interval)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.full:
	case <-s.stop:
		return true
	}
	return false
}

// commitBatch commits b in one transaction and releases its writers. A
// failed commit makes the store refuse every later write.
func (s *store) commitBatch(b *batch) {
	if f := s.failure.Load(); f != nil {
		// After a failed commit, committing a later batch would leave a
		// gap in the file: what it holds must stay a prefix.
		b.err = f
		close(b.done)
		return
	}
	s.committing.Store(int64(len(b.changes)))
	defer s.committing.Store(0)
	start := time.Now()
	err := s.db.Update(b.writeTo)
	s.commitTime.Add(int64(time.Since(start)))
	if err != nil {
		ce := &CommitError{Err: err}
		s.failure.CompareAndSwap(nil, ce)
		s.mu.Lock()
		s.refusal = s.failure.Load()
		s.mu.Unlock()
		b.err = ce
	} else {
		s.commits.Add(1)
		s.writes.Add(uint64(len(b.changes)))
	}
	close(b.done)
}

// writeTo writes the changes of b in order, and the creation-time floor.
func (b *batch) writeTo(tx *bbolt.Tx) error {
	res := tx.Bucket(resourcesBucket)
	// bbolt keeps the keys it is given until the commit: they are carved
	// from one buffer, never overwritten (a grown buffer leaves the keys
	// carved before in the old one).
	var keys []byte
	for _, c := range b.changes {
		start := len(keys)
		keys = appendKey(keys, c.ns, c.typ, c.id)
		key := keys[start:len(keys):len(keys)]
		var err error
		if c.value == nil {
			err = res.Delete(key)
		} else {
			err = res.Put(key, c.value)
		}
		if err != nil {
			return err
		}
	}
	if b.floor.IsZero() {
		return nil
	}
	meta := tx.Bucket(metaBucket)
	if old := meta.Get(floorKey); len(old) == 8 && int64(binary.BigEndian.Uint64(old)) >= b.floor.UnixNano() {
		return nil
	}
	return meta.Put(floorKey, binary.BigEndian.AppendUint64(nil, uint64(b.floor.UnixNano())))
}

// close refuses further writes, lets the committer commit what is queued,
// waits for it to exit and closes the file.
func (s *store) close() error {
	// A rotation stops between two batches; the next Open resumes it.
	s.rot.cancel()
	s.rot.sem <- struct{}{}
	s.mu.Lock()
	if s.refusal == nil {
		s.refusal = ErrClosed
	}
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	err := s.db.Close()
	if f := s.failure.Load(); f != nil {
		return f
	}
	return err
}
