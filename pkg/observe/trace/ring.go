package trace

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// DefaultSize is the number of records a Runtime's ring keeps unless
// configured otherwise: 4096 records, 1.25 MiB (a record's slot is 320
// bytes, plus the strings it shares with the Runtime).
const DefaultSize = 4096

// Ring keeps the newest records, up to its size. A nil *Ring is a disabled
// trace: Add does nothing and the readers return nothing. All methods are
// safe for concurrent use.
//
// Writes are cheap: one atomic increment gives the record its sequence
// number and its slot, and the record is copied into the slot under the
// slot's own lock, which only a reader of that slot or a writer that
// wrapped around the whole ring competes for. Readers never block writers
// for longer than one slot copy.
type Ring struct {
	slots []slot
	size  uint64
	// mask is size-1 when size is a power of two (the default), whose
	// slot index is then a mask rather than a division; 0 otherwise.
	mask uint64
	// last is the sequence number given to the newest record.
	last atomic.Uint64
	// read is the sequence number up to which the ring's reader has read
	// (see [Ring.MarkRead]); half is size/2 (at least 1); halfFull gets a
	// value (capacity 1, sent without blocking) from the writer of the
	// record numbered read+half.
	read     atomic.Uint64
	half     uint64
	halfFull chan struct{}

	// armed is set while a follower waits for the next record; the next Add
	// clears it and closes wake.
	armed  atomic.Bool
	wakeMu sync.Mutex
	// wake is closed by the first Add after a follower armed it; protected
	// by wakeMu.
	wake chan struct{}
}

// slot holds one record; ev.Seq tells which. It is a whole number of
// cache lines (see slotPad): the slots of a ring, which starts on a line
// (the allocator aligns a large object to a page), each start on a line,
// and the lines [Ring.Put] writes — the lock and the fields Head sets,
// before Cause — are the first three of its slot whatever its index.
type slot struct {
	slotData
	_ [slotPad]byte
}

// slotData is what a slot holds.
type slotData struct {
	mu sync.Mutex
	// rest is false when the fields of ev that Head does not set
	// (Cause, Due, Error, Detail) are known to be zero: Put then need not
	// read them to clear them.
	rest bool
	ev   Record
}

// cacheLine is the size of a cache line (64 bytes on amd64 and arm64).
const cacheLine = 64

// slotPad pads a slot to a whole number of cache lines.
const slotPad = (cacheLine - unsafe.Sizeof(slotData{})%cacheLine) % cacheLine

// NewRing returns a ring that keeps the newest size records, or nil (a
// disabled trace) when size <= 0.
func NewRing(size int) *Ring {
	if size <= 0 {
		return nil
	}
	r := &Ring{slots: make([]slot, size), size: uint64(size), half: max(uint64(size)/2, 1), halfFull: make(chan struct{}, 1)}
	if size&(size-1) == 0 {
		r.mask = r.size - 1
	}
	return r
}

// slot returns the slot of the record numbered seq.
func (r *Ring) slot(seq uint64) *slot {
	if r.mask != 0 {
		return &r.slots[seq&r.mask]
	}
	return &r.slots[seq%r.size]
}

// Size returns how many records the ring keeps (0 for a nil ring).
func (r *Ring) Size() int {
	if r == nil {
		return 0
	}
	return int(r.size)
}

// Add copies ev into the ring, with its Seq set to the next sequence
// number, which it returns (0 for a nil ring). The oldest record is
// overwritten when the ring is full. It never allocates.
func (r *Ring) Add(ev *Record) uint64 {
	if r == nil {
		return 0
	}
	seq := r.last.Add(1)
	s := r.slot(seq)
	s.mu.Lock()
	// A writer that wrapped around the ring while this one was between
	// the increment and the lock wrote a newer record here: keep it.
	if s.ev.Seq < seq {
		s.ev = *ev
		s.ev.Seq = seq
		s.rest = true
	}
	s.mu.Unlock()
	r.added(seq)
	return seq
}

// Head is what every record [Ring.Put] adds sets: the fields of [Record]
// of the same names (any may be zero), which most records set.
type Head struct {
	Type       Type
	Outcome    Outcome
	Causes     uint32
	Worker     uint32
	Time       time.Time
	Controller string
	Op         string
	Resource   Ref
	Duration   time.Duration
}

// Put adds the record made of h and what fill writes, as [Ring.Add] adds
// a copy of a record, and returns its sequence number (0 for a nil ring).
// fill (nil: none) gets the record's place in the ring with h's fields
// set and every other field zero — nothing of the record it overwrites
// survives — and sets the other fields (Put then sets Seq). It runs
// under the slot's lock: it must be quick, must not keep the pointer and
// must not call the ring. Put never allocates. It saves Add's copy of the
// record and the zeroing of the fields h sets, and with a nil fill over a
// record that had none of the other fields set it does not touch them.
// fill is not called for a nil ring.
func (r *Ring) Put(h *Head, fill func(*Record)) uint64 {
	if r == nil {
		return 0
	}
	seq := r.last.Add(1)
	s := r.slot(seq)
	s.mu.Lock()
	// As in Add: keep a newer record of a writer that wrapped around.
	if e := &s.ev; e.Seq < seq {
		e.Type, e.Time, e.Controller, e.Op, e.Resource = h.Type, h.Time, h.Controller, h.Op, h.Resource
		e.Outcome, e.Attempt, e.Causes, e.Worker, e.Duration = h.Outcome, 0, h.Causes, h.Worker, h.Duration
		if s.rest {
			clearRest(e)
		}
		s.rest = fill != nil
		if fill != nil {
			fill(e)
		}
		e.Seq = seq
	}
	s.mu.Unlock()
	r.added(seq)
	return seq
}

// clearRest zeroes the fields of e that [Head] does not set but Attempt
// (which Put sets). It writes a field only when it is not zero already: a
// record rarely sets them, and a pointer written while the collector runs
// costs a write barrier.
func clearRest(e *Record) {
	// Field by field: comparing the Refs whole calls their equality
	// function (its strings' contents), where a length is enough.
	if c := &e.Cause; len(c.Namespace)|len(c.Type)|len(c.ID)|len(c.Writer) != 0 || c.Version != 0 {
		*c = Ref{}
	}
	if e.Due != (time.Time{}) {
		e.Due = time.Time{}
	}
	if e.Error != "" {
		e.Error = ""
	}
	if e.Detail != "" {
		e.Detail = ""
	}
}

// added wakes the reader when seq is the record that makes half the ring
// written since its last read, and a follower waiting for the next record.
func (r *Ring) added(seq uint64) {
	if seq-r.read.Load() == r.half {
		select {
		case r.halfFull <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
	if r.armed.Load() && r.armed.CompareAndSwap(true, false) {
		r.wakeMu.Lock()
		if r.wake != nil {
			close(r.wake)
			r.wake = nil
		}
		r.wakeMu.Unlock()
	}
}

// HalfFull returns the channel on which the ring wakes its reader: it gets
// a value when half the ring's records (size/2, at least 1) were added
// since the sequence number last given to [Ring.MarkRead] (0 at first),
// so that a reader that reads on this signal, as well as on its own
// schedule, loses records only when it cannot keep up. A value is sent
// without blocking and kept until received (one at most). A ring has one
// such reader (the Runtime's trace poller): followers do not use it. A
// nil ring returns a nil channel (never ready).
func (r *Ring) HalfFull() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.halfFull
}

// MarkRead tells the ring that its reader (see [Ring.HalfFull]) has read
// the records up to seq, and reports whether half the ring was written
// since then already: the reader must then read again without waiting
// for a wake-up, which the writer of that record may have sent before
// this mark. It does nothing and reports false for a nil ring.
func (r *Ring) MarkRead(seq uint64) (again bool) {
	if r == nil {
		return false
	}
	r.read.Store(seq)
	return r.last.Load()-seq >= r.half
}

// Last returns the sequence number of the newest record added (0 when none
// was, or for a nil ring).
func (r *Ring) Last() uint64 {
	if r == nil {
		return 0
	}
	return r.last.Load()
}

// Snapshot returns every record the ring holds, oldest first.
func (r *Ring) Snapshot() []Record {
	recs, _ := r.Since(0, nil)
	return recs
}

// Since appends to dst the records with a sequence number above after that
// the ring still holds, oldest first, and returns it with the number of
// such records it no longer holds (overwritten before they were read). It
// stops before a record whose writer has its sequence number but has not
// yet stored it, so that what it returns has no gap but those counted as
// lost; a later call returns the rest.
func (r *Ring) Since(after uint64, dst []Record) (records []Record, lost uint64) {
	_, lost = r.Visit(after, func(e *Record) { dst = append(dst, *e) })
	return dst, lost
}

// Visit calls fn with each record that [Ring.Since] would return for after,
// oldest first, without copying them: fn gets a pointer into the ring,
// valid during the call only, and runs under the record's slot lock (it
// must be quick, must not keep the pointer and must not call the ring).
// It returns the sequence number of the last record visited (after when
// none was) and how many records above after the ring no longer held.
func (r *Ring) Visit(after uint64, fn func(*Record)) (last, lost uint64) {
	if r == nil {
		return after, 0
	}
	newest := r.last.Load()
	if newest <= after {
		return after, 0
	}
	first := after + 1
	if newest >= r.size && newest-r.size+1 > first {
		lost = newest - r.size + 1 - first
		first = newest - r.size + 1
	}
	last = first - 1
	for seq := first; seq <= newest; seq++ {
		s := r.slot(seq)
		s.mu.Lock()
		got := s.ev.Seq
		if got == seq {
			fn(&s.ev)
		}
		s.mu.Unlock()
		switch {
		case got > seq:
			lost++ // overwritten since newest was read
			last = seq
		case got < seq:
			return last, lost // not stored yet
		default:
			last = seq
		}
	}
	return last, lost
}

// arm returns a channel closed by the next Add.
func (r *Ring) arm() <-chan struct{} {
	r.wakeMu.Lock()
	defer r.wakeMu.Unlock()
	if r.wake == nil {
		r.wake = make(chan struct{})
	}
	r.armed.Store(true)
	return r.wake
}

// Follower reads a ring's records in order as they are added; see
// [Ring.Follow]. A Follower is used by one goroutine.
type Follower struct {
	r    *Ring
	next uint64 // sequence number of the next record to return
}

// Follow returns a follower that starts after the newest record the ring
// holds now (from = false) or with the oldest one it holds (from = true).
func (r *Ring) Follow(fromOldest bool) *Follower {
	f := &Follower{r: r, next: r.Last() + 1}
	if fromOldest {
		f.next = 1
	}
	return f
}

// Next waits until the ring has records the follower has not read, and
// appends them to dst, oldest first. When records were overwritten before
// the follower read them, a [Lost] record (Attempt = how many; Seq = the
// last of them) comes first. It returns ctx's error, and dst unchanged,
// when ctx is done first. On a nil ring it waits for ctx.
func (f *Follower) Next(ctx context.Context, dst []Record) ([]Record, error) {
	for {
		if err := ctx.Err(); err != nil {
			return dst, err
		}
		n := len(dst)
		dst, lost := f.r.Since(f.next-1, dst)
		if lost > 0 || len(dst) > n {
			got := dst[n:]
			if lost > 0 {
				ev := Record{Type: Lost, Attempt: uint32(min(lost, 1<<32-1)), Seq: f.next + lost - 1}
				if len(got) > 0 {
					ev.Time = got[0].Time
				}
				dst = append(dst[:n], append([]Record{ev}, got...)...)
			}
			f.next = dst[len(dst)-1].Seq + 1
			return dst, nil
		}
		if f.r == nil {
			<-ctx.Done()
			continue
		}
		wake := f.r.arm()
		// Re-check after arming: a record stored before the arm did not
		// close the channel.
		if recs, lost := f.r.Since(f.next-1, dst[n:n]); len(recs) > 0 || lost > 0 {
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}
