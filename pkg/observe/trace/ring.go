package trace

import (
	"context"
	"sync"
	"sync/atomic"
)

// DefaultSize is the number of events an engine's ring keeps unless
// configured otherwise: 4096 events, about 1.1 MiB (an event is about 270
// bytes, plus the strings it shares with the engine).
const DefaultSize = 4096

// Ring keeps the newest events, up to its size. A nil *Ring is a disabled
// trace: Add does nothing and the readers return nothing. All methods are
// safe for concurrent use.
//
// Writes are cheap: one atomic increment gives the event its sequence
// number and its slot, and the event is copied into the slot under the
// slot's own lock, which only a reader of that slot or a writer that
// wrapped around the whole ring competes for. Readers never block writers
// for longer than one slot copy.
type Ring struct {
	slots []slot
	size  uint64
	// mask is size-1 when size is a power of two (the default), whose
	// slot index is then a mask rather than a division; 0 otherwise.
	mask uint64
	// last is the sequence number given to the newest event.
	last atomic.Uint64

	// armed is set while a follower waits for the next event; the next Add
	// clears it and closes wake.
	armed  atomic.Bool
	wakeMu sync.Mutex
	// wake is closed by the first Add after a follower armed it; protected
	// by wakeMu.
	wake chan struct{}
}

// slot holds one event; ev.Seq tells which.
type slot struct {
	mu sync.Mutex
	ev Event
}

// NewRing returns a ring that keeps the newest size events, or nil (a
// disabled trace) when size <= 0.
func NewRing(size int) *Ring {
	if size <= 0 {
		return nil
	}
	r := &Ring{slots: make([]slot, size), size: uint64(size)}
	if size&(size-1) == 0 {
		r.mask = r.size - 1
	}
	return r
}

// slot returns the slot of the event numbered seq.
func (r *Ring) slot(seq uint64) *slot {
	if r.mask != 0 {
		return &r.slots[seq&r.mask]
	}
	return &r.slots[seq%r.size]
}

// Size returns how many events the ring keeps (0 for a nil ring).
func (r *Ring) Size() int {
	if r == nil {
		return 0
	}
	return int(r.size)
}

// Add copies ev into the ring, with its Seq set to the next sequence
// number, which it returns (0 for a nil ring). The oldest event is
// overwritten when the ring is full. It never allocates.
func (r *Ring) Add(ev *Event) uint64 {
	if r == nil {
		return 0
	}
	seq := r.last.Add(1)
	s := r.slot(seq)
	s.mu.Lock()
	// A writer that wrapped around the ring while this one was between
	// the increment and the lock wrote a newer event here: keep it.
	if s.ev.Seq < seq {
		s.ev = *ev
		s.ev.Seq = seq
	}
	s.mu.Unlock()
	r.added()
	return seq
}

// Put adds the event fill writes, as [Ring.Add] adds a copy of an event:
// fill gets the event's place in the ring, zeroed, sets its fields (Seq
// and Time included: Put then sets Seq), and runs under the slot's lock:
// it must be quick, must not keep the pointer and must not call the ring.
// It saves Add's copy of the event; fill is not called for a nil ring.
func (r *Ring) Put(fill func(*Event)) uint64 {
	if r == nil {
		return 0
	}
	seq := r.last.Add(1)
	s := r.slot(seq)
	s.mu.Lock()
	// As in Add: keep a newer event of a writer that wrapped around.
	if s.ev.Seq < seq {
		s.ev = Event{}
		fill(&s.ev)
		s.ev.Seq = seq
	}
	s.mu.Unlock()
	r.added()
	return seq
}

// added wakes a follower waiting for the next event.
func (r *Ring) added() {
	if r.armed.Load() && r.armed.CompareAndSwap(true, false) {
		r.wakeMu.Lock()
		if r.wake != nil {
			close(r.wake)
			r.wake = nil
		}
		r.wakeMu.Unlock()
	}
}

// Last returns the sequence number of the newest event added (0 when none
// was, or for a nil ring).
func (r *Ring) Last() uint64 {
	if r == nil {
		return 0
	}
	return r.last.Load()
}

// Snapshot returns every event the ring holds, oldest first.
func (r *Ring) Snapshot() []Event {
	evs, _ := r.Since(0, nil)
	return evs
}

// Since appends to dst the events with a sequence number above after that
// the ring still holds, oldest first, and returns it with the number of
// such events it no longer holds (overwritten before they were read). It
// stops before an event whose writer has its sequence number but has not
// yet stored it, so that what it returns has no gap but those counted as
// lost; a later call returns the rest.
func (r *Ring) Since(after uint64, dst []Event) (events []Event, lost uint64) {
	if r == nil {
		return dst, 0
	}
	last := r.last.Load()
	if last <= after {
		return dst, 0
	}
	first := after + 1
	if last >= r.size && last-r.size+1 > first {
		lost = last - r.size + 1 - first
		first = last - r.size + 1
	}
	for seq := first; seq <= last; seq++ {
		s := r.slot(seq)
		s.mu.Lock()
		got := s.ev.Seq
		if got == seq {
			dst = append(dst, s.ev)
		}
		s.mu.Unlock()
		switch {
		case got > seq:
			lost++ // overwritten since last was read
		case got < seq:
			return dst, lost // not stored yet
		}
	}
	return dst, lost
}

// Visit calls fn with each event that [Ring.Since] would return for after,
// oldest first, without copying them: fn gets a pointer into the ring,
// valid during the call only, and runs under the event's slot lock (it
// must be quick, must not keep the pointer and must not call the ring).
// It returns the sequence number of the last event visited (after when
// none was) and how many events above after the ring no longer held.
func (r *Ring) Visit(after uint64, fn func(*Event)) (last, lost uint64) {
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

// Follower reads a ring's events in order as they are added; see
// [Ring.Follow]. A Follower is used by one goroutine.
type Follower struct {
	r    *Ring
	next uint64 // sequence number of the next event to return
}

// Follow returns a follower that starts after the newest event the ring
// holds now (from = false) or with the oldest one it holds (from = true).
func (r *Ring) Follow(fromOldest bool) *Follower {
	f := &Follower{r: r, next: r.Last() + 1}
	if fromOldest {
		f.next = 1
	}
	return f
}

// Next waits until the ring has events the follower has not read, and
// appends them to dst, oldest first. When events were overwritten before
// the follower read them, a [Lost] event (Attempt = how many; Seq = the
// last of them) comes first. It returns ctx's error, and dst unchanged,
// when ctx is done first. On a nil ring it waits for ctx.
func (f *Follower) Next(ctx context.Context, dst []Event) ([]Event, error) {
	for {
		if err := ctx.Err(); err != nil {
			return dst, err
		}
		n := len(dst)
		dst, lost := f.r.Since(f.next-1, dst)
		if lost > 0 || len(dst) > n {
			got := dst[n:]
			if lost > 0 {
				ev := Event{Type: Lost, Attempt: uint32(min(lost, 1<<32-1)), Seq: f.next + lost - 1}
				if len(got) > 0 {
					ev.Time = got[0].Time
				}
				dst = append(dst[:n], append([]Event{ev}, got...)...)
			}
			f.next = dst[len(dst)-1].Seq + 1
			return dst, nil
		}
		if f.r == nil {
			<-ctx.Done()
			continue
		}
		wake := f.r.arm()
		// Re-check after arming: an event stored before the arm did not
		// close the channel.
		if evs, lost := f.r.Since(f.next-1, dst[n:n]); len(evs) > 0 || lost > 0 {
			continue
		}
		select {
		case <-wake:
		case <-ctx.Done():
		}
	}
}
