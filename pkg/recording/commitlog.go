package recording

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// commitChunkLen is how many changes a chunk of changes holds; a commit
// log's writer wakes the recorder each time it fills one. A chunk (its
// changes, its base and its counters) is one 8 KiB allocation.
const commitChunkLen = 508

// committed is one change in 16 bytes with one pointer: data is the data
// word of the resource after it (before it, for a destroy; its type word
// is its chunk's, see commitChunk), and bits holds what it did (its top
// two bits, a commitOp), its revision's distance from its chunk's base
// revision (the next revDeltaBits) and its time's from its chunk's base
// time (the low atDeltaBits, in nanoseconds). What it replaced is the
// version the change before it of the resource left, which the window
// knows when it needs it (a take's fold, rule RC3, or the classifying
// window's state now). A chunk of changes holds one pointer word a
// change, so the collector scans little of it and the writer's stores
// meet one write barrier a change.
type committed struct {
	data unsafe.Pointer
	bits uint64
}

// commitOp is what a committed change did.
type commitOp uint8

const (
	committedCreate commitOp = iota
	committedUpdate
	committedDestroy
)

const (
	atDeltaBits  = 38 // 4.5 minutes
	revDeltaBits = 64 - 2 - atDeltaBits
	opShift      = atDeltaBits + revDeltaBits
)

// ifaceWords is the layout of an interface value: its type word and its
// data word.
type ifaceWords struct{ typ, data unsafe.Pointer }

// chunkBase is what a chunk's changes are relative to: the revision and
// time of its first change, and the type word of its first change's
// resource.
type chunkBase struct {
	rev uint64
	at  int64
	typ unsafe.Pointer
}

// commitChunk is a run of changes (a commit log's, or the changes watches
// brought to a window): recs[:n] are written, next is the chunk after it
// once its writer started another. Its base is set with its first
// change; a change whose revision or time does not fit a delta from it
// (a revision lower than the base's, or a time earlier, or too far
// after) goes to a new chunk. types holds each change's type word once a
// change's resource is of another Go type than the first's (a kind
// served by several types); nil until then.
type commitChunk struct {
	recs  [commitChunkLen]committed
	base  chunkBase
	types atomic.Pointer[[commitChunkLen]unsafe.Pointer]
	n     atomic.Uint32
	// fastTyp is the type word of the changes a commit log's writer
	// appends on its own (base.typ; nil once types is set): the writer's
	// own, the reader reads types.
	fastTyp unsafe.Pointer
	next    atomic.Pointer[commitChunk]
}

// put writes the change op of res at revision rev and time at as the
// chunk's ith change (i is the count written so far); false when it does
// not fit the chunk (i is its length, or its deltas do not fit the
// base): a change always fits an empty chunk. It does not publish the
// change (n).
func (c *commitChunk) put(i uint32, res resource.Resource, rev uint64, op commitOp, at int64) bool {
	w := (*ifaceWords)(unsafe.Pointer(&res))
	if i == 0 {
		c.base, c.fastTyp = chunkBase{rev: rev, at: at, typ: w.typ}, w.typ
	}
	// A revision lower than the base's, or a time earlier, wraps to a
	// delta too wide.
	dr, dt := rev-c.base.rev, uint64(at-c.base.at)
	if i == commitChunkLen || dr>>revDeltaBits != 0 || dt>>atDeltaBits != 0 {
		return false
	}
	if w.typ != c.base.typ || c.types.Load() != nil {
		c.putType(i, w.typ)
	}
	c.recs[i] = committed{data: w.data, bits: uint64(op)<<opShift | dr<<atDeltaBits | dt}
	return true
}

// putType notes the type word of the ith change, making the chunk's
// table of type words at the first change of another type than the
// first's.
func (c *commitChunk) putType(i uint32, typ unsafe.Pointer) {
	ts := c.types.Load()
	if ts == nil {
		ts = new([commitChunkLen]unsafe.Pointer)
		for j := range i {
			ts[j] = c.base.typ
		}
		c.types.Store(ts)
		c.fastTyp = nil
	}
	ts[i] = typ
}

// run is a run of a chunk's changes, recs[from:to], which a window keeps
// as it is (the chunk's writer never writes them again).
type run struct {
	c        *commitChunk
	from, to uint32
}

// len returns how many changes the run holds.
func (r *run) len() int { return int(r.to - r.from) }

// res returns the resource of the run's ith change.
func (r *run) res(i int) resource.Resource {
	j := r.from + uint32(i)
	w := ifaceWords{typ: r.c.base.typ, data: r.c.recs[j].data}
	if ts := r.c.types.Load(); ts != nil {
		w.typ = ts[j]
	}
	return *(*resource.Resource)(unsafe.Pointer(&w))
}

// rev returns the revision of the run's ith change (0: not numbered).
func (r *run) rev(i int) uint64 {
	return r.c.base.rev + r.c.recs[r.from+uint32(i)].bits<<2>>(2+atDeltaBits)
}

// at returns the time of the run's ith change (Unix nanoseconds).
func (r *run) at(i int) int64 {
	return r.c.base.at + int64(r.c.recs[r.from+uint32(i)].bits&(1<<atDeltaBits-1))
}

// op returns what the run's ith change did.
func (r *run) op(i int) commitOp { return commitOp(r.c.recs[r.from+uint32(i)].bits >> opShift) }

// commitLog is a kind's changes as the state's writers commit them (it is
// the kind's kindtap.Tap, rule RC11): written by one writer at a time
// (the state calls Committed holding the kind's write lock) and read by
// the recorder holding its own lock, neither waiting for the other. The
// writer fills the tail chunk, publishing its count after each change,
// and wakes the recorder when it starts a new chunk while kickAt chunks
// or more are unread (a quarter of its limit: the recorder otherwise
// drains it at its tick, a take or a Sync, so a burst of writes makes no
// wake-up a chunk); the reader reads up to the published count. The chunks are the recorder's window (rule
// RC3): the reader hands each run it reads to the window, which keeps it
// as it is until the window's start passes it, so a chunk is never
// reused (one is allocated per commitChunkLen changes, or sooner).
//
// It is bounded: when the writer is limit chunks ahead of the reader it
// stops writing and marks the log overflowed; the recorder then starts
// its window over (it could not see every change).
type commitLog struct {
	kind resource.Kind
	// tail and its count are the writer's own.
	tail  *commitChunk
	tailN uint32
	// head and its read count are the reader's own.
	head *commitChunk
	read uint32
	// started and finished count the chunks the writer started and the
	// reader finished.
	started, finished atomic.Int64
	limit, kickAt     int64
	overflow          atomic.Bool
	kick              chan<- struct{}
	remove            func()
}

func newCommitLog(kind resource.Kind, limit int64, kick chan<- struct{}) *commitLog {
	c := &commitChunk{}
	limit = max(limit, 2)
	l := &commitLog{kind: kind, tail: c, head: c, limit: limit, kickAt: max(limit/4, 2), kick: kick, remove: func() {}}
	l.started.Store(1)
	return l
}

// commitLogLimit is the number of chunks a log may hold unread: what the
// window's bytes bound would hold of changes of entryOverhead bytes.
func commitLogLimit(maxBytes int64) int64 {
	return maxBytes / entryOverhead / commitChunkLen
}

// Committed implements kindtap.Tap: it appends the change to the tail
// chunk, or to a new one when it does not fit the tail.
func (l *commitLog) Committed(rev uint64, old, new resource.Resource, at int64) {
	res, op := new, committedUpdate
	switch {
	case new == nil:
		res, op = old, committedDestroy
	case old == nil:
		op = committedCreate
	}
	// The common change, inlined: of the tail's first change's type,
	// near enough to it (commitChunk.put says the same at more cost).
	c, i := l.tail, l.tailN
	w := *(*ifaceWords)(unsafe.Pointer(&res))
	dr, dt := rev-c.base.rev, uint64(at-c.base.at)
	if i-1 >= commitChunkLen-1 || (dr>>revDeltaBits|dt>>atDeltaBits) != 0 || w.typ != c.fastTyp {
		l.put(res, rev, op, at)
		return
	}
	c.recs[i] = committed{data: w.data, bits: uint64(op)<<opShift | dr<<atDeltaBits | dt}
	l.tailN = i + 1
	c.n.Store(i + 1)
}

// put appends a change that is not the common one to the tail chunk, or
// to a new one when it does not fit the tail.
func (l *commitLog) put(res resource.Resource, rev uint64, op commitOp, at int64) {
	if !l.tail.put(l.tailN, res, rev, op, at) {
		if !l.grow() {
			return
		}
		l.tail.put(0, res, rev, op, at)
	}
	l.tailN++
	l.tail.n.Store(l.tailN)
}

// grow starts a new tail chunk, and wakes the reader once kickAt chunks
// are unread; false when the log overflowed (the change is not written;
// the reader is woken).
func (l *commitLog) grow() bool {
	unread := l.started.Load() - l.finished.Load()
	if l.overflow.Load() || unread >= l.limit {
		l.overflow.Store(true)
		l.wake()
		return false
	}
	next := &commitChunk{}
	l.started.Add(1)
	l.tail.next.Store(next)
	l.tail, l.tailN = next, 0
	if unread+1 >= l.kickAt {
		l.wake()
	}
	return true
}

func (l *commitLog) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// errFellBehind ends a session whose commit log overflowed.
var errFellBehind = errors.New("the recorder fell behind its kinds' commits")

// drain hands every change written and not read yet to fn, a chunk's run
// at a time (fn may keep the run: the log never writes it again). It
// fails once the log overflowed. The caller is the log's one reader.
func (l *commitLog) drain(fn func(run)) error {
	for {
		c := l.head
		next := c.next.Load()
		n := c.n.Load() // final once next is set: the writer set it before
		if n > l.read {
			fn(run{c: c, from: l.read, to: n})
			l.read = n
		}
		if next == nil {
			break
		}
		l.head, l.read = next, 0
		c.next.Store(nil) // the chunk is fn's now
		l.finished.Add(1)
	}
	if l.overflow.Load() {
		return fmt.Errorf("%w (%s)", errFellBehind, resource.KindString(l.kind))
	}
	return nil
}

// tapCommits taps the commits of kind in the recorder's state, when it can
// tap a kind's commits (kindtap.Tapper); nil otherwise.
func (r *Recorder) tapKindCommits(kind resource.Kind, kick chan<- struct{}) *commitLog {
	t, ok := r.st.(kindtap.Tapper)
	if !ok || r.cfg.ownWatches {
		return nil
	}
	l := newCommitLog(kind, commitLogLimit(r.cfg.maxBytes), kick)
	remove, err := t.TapKind(kind, l)
	if err != nil {
		return nil
	}
	l.remove = remove
	return l
}

// drainLocked adds the changes of the session's tap buffer (rule RC8)
// and of its commit logs to the window; r.mu is held (the logs' one
// reader).
func (r *Recorder) drainLocked() error {
	src := r.src
	if src == nil || !r.ready {
		return nil
	}
	src.tap.buf.flushLocked(r)
	for _, l := range src.logs {
		if err := l.drain(r.committedLocked); err != nil {
			return err
		}
	}
	return nil
}

// committedLocked adds a run of committed changes to the window, each at
// the time of its write.
func (r *Recorder) committedLocked(cs run) {
	r.win.addRun(cs)
	r.progressedLocked()
}
