package inmem

import (
	"sync/atomic"
	"time"
)

// clockResync is how long the clock advances a wall-clock reading by the
// monotonic clock before it reads the wall clock again.
const clockResync = time.Second

// clock stamps writes. Every write needs a timestamp, and reading the wall
// and monotonic clocks together (time.Now) costs more than reading the
// monotonic clock alone; so the clock reads the wall clock at most once
// per clockResync and advances that reading by the monotonic clock in
// between. Timestamps are therefore wall-clock times that never go
// backwards between resyncs and follow any change of the system clock
// within clockResync. (docs/performance.md, "The write clock", has what
// it saves per write.)
type clock struct {
	base atomic.Pointer[clockBase] // replaced on resync
}

// clockBase is a time.Now reading and its wall-clock time in nanoseconds.
type clockBase struct {
	at   time.Time
	wall int64
}

func newClock() *clock {
	c := &clock{}
	now := time.Now()
	c.base.Store(&clockBase{at: now, wall: now.UnixNano()})
	return c
}

// now returns the current time, and the same in nanoseconds since the
// Unix epoch (its UnixNano).
func (c *clock) now() (time.Time, int64) {
	base := c.base.Load()
	elapsed := time.Since(base.at) // monotonic clock only
	if elapsed < clockResync {
		at := base.wall + int64(elapsed)
		return time.Unix(0, at), at
	}
	now := time.Now()
	c.base.CompareAndSwap(base, &clockBase{at: now, wall: now.UnixNano()})
	return now, now.UnixNano()
}
