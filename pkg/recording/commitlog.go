package recording

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// commitChunkLen is how many changes a chunk of a commit log holds; the
// writer wakes the recorder each time it fills one. A chunk (its changes
// and its two counters) is one 8 KiB allocation: 256 changes and the
// counters would take the next size class, 9.25 KiB.
const commitChunkLen = 255

// committed is one change as a kind's writer handed it over, in 32
// bytes with one pointer: res is the resource after it (before it, for a
// destroy). What it replaced is the version the change before it of the
// resource left, which the window knows when it needs it (a take's fold,
// rule RC3, or the classifying window's state now): a chunk of changes
// holds half the pointers, so the collector scans less of it and the
// writer's stores meet half the write barriers. revOp is the change's
// revision (its low 62 bits; a revision at or above 2^62 is kept as 0,
// not numbered: its change is ordered by its arrival) and what it did
// (its top two bits, a commitOp).
type committed struct {
	res   resource.Resource
	revOp uint64
	at    int64
}

// commitOp is what a committed change did.
type commitOp uint8

const (
	committedCreate commitOp = iota
	committedUpdate
	committedDestroy
)

const revBits = 62

// newCommitted returns the change op made of res at revision rev, at at.
func newCommitted(res resource.Resource, rev uint64, op commitOp, at int64) committed {
	if rev>>revBits != 0 {
		rev = 0
	}
	return committed{res: res, revOp: rev | uint64(op)<<revBits, at: at}
}

// rev returns the change's revision (0: not numbered).
func (c *committed) rev() uint64 { return c.revOp & (1<<revBits - 1) }

// op returns what the change did.
func (c *committed) op() commitOp { return commitOp(c.revOp >> revBits) }

// commitChunk is a run of a commit log's changes: recs[:n] are written,
// next is the chunk after it once the writer filled this one.
type commitChunk struct {
	recs [commitChunkLen]committed
	n    atomic.Uint32
	next atomic.Pointer[commitChunk]
}

// commitLog is a kind's changes as the state's writers commit them (it is
// the kind's kindtap.Tap, rule RC11): written by one writer at a time
// (the state calls Committed holding the kind's write lock) and read by
// the recorder holding its own lock, neither waiting for the other. The
// writer fills the tail chunk, publishing its count after each change,
// and wakes the recorder when it starts a new chunk; the reader reads up
// to the published count. The chunks are the recorder's window (rule
// RC3): the reader hands each run it reads to the window, which keeps it
// as it is until the window's start passes it, so a chunk is never
// reused (one is allocated per commitChunkLen changes).
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
	limit             int64
	overflow          atomic.Bool
	kick              chan<- struct{}
	remove            func()
}

func newCommitLog(kind resource.Kind, limit int64, kick chan<- struct{}) *commitLog {
	c := &commitChunk{}
	l := &commitLog{kind: kind, tail: c, head: c, limit: max(limit, 2), kick: kick, remove: func() {}}
	l.started.Store(1)
	return l
}

// commitLogLimit is the number of chunks a log may hold unread: what the
// window's bytes bound would hold of changes of entryOverhead bytes.
func commitLogLimit(maxBytes int64) int64 {
	return maxBytes / entryOverhead / commitChunkLen
}

// Committed implements kindtap.Tap: it appends the change to the tail
// chunk, or to a new one when the tail is full.
func (l *commitLog) Committed(rev uint64, old, new resource.Resource, at int64) {
	if l.tailN == commitChunkLen {
		if !l.grow() {
			return
		}
	}
	c := &l.tail.recs[l.tailN]
	switch {
	case new == nil:
		*c = newCommitted(old, rev, committedDestroy, at)
	case old == nil:
		*c = newCommitted(new, rev, committedCreate, at)
	default:
		*c = newCommitted(new, rev, committedUpdate, at)
	}
	l.tailN++
	l.tail.n.Store(l.tailN)
}

// grow starts a new tail chunk and wakes the reader; false when the log
// overflowed (the change is not written).
func (l *commitLog) grow() bool {
	if l.overflow.Load() || l.started.Load()-l.finished.Load() >= l.limit {
		l.overflow.Store(true)
		l.wake()
		return false
	}
	next := &commitChunk{}
	l.started.Add(1)
	l.tail.next.Store(next)
	l.tail, l.tailN = next, 0
	l.wake()
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
func (l *commitLog) drain(fn func([]committed)) error {
	for {
		c := l.head
		n := c.n.Load()
		if n > l.read {
			fn(c.recs[l.read:n])
			l.read = n
		}
		next := c.next.Load()
		if n < commitChunkLen || next == nil {
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

// drainLocked adds the changes of the session's commit logs to the
// window; r.mu is held (the logs' one reader).
func (r *Recorder) drainLocked() error {
	src := r.src
	if src == nil || !r.ready {
		return nil
	}
	for _, l := range src.logs {
		if err := l.drain(r.committedLocked); err != nil {
			return err
		}
	}
	return nil
}

// committedLocked adds a run of committed changes to the window, each at
// the time of its write.
func (r *Recorder) committedLocked(cs []committed) {
	r.win.addRun(cs)
	r.progressedLocked()
}
