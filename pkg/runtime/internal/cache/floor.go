package cache

import "sync/atomic"

// Floor is the revision a controller's reads must reach: the highest
// revision among its own writes (the state's revision after each of them)
// and the changes routed to it (raised before the controller is woken or
// the item queued). It only grows. A nil *Floor is 0 and ignores raises.
type Floor struct {
	v atomic.Uint64
}

// Raise raises the floor to rev if it is higher.
func (f *Floor) Raise(rev uint64) {
	if f == nil {
		return
	}
	for {
		cur := f.v.Load()
		if rev <= cur || f.v.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// Load returns the floor.
func (f *Floor) Load() uint64 {
	if f == nil {
		return 0
	}
	return f.v.Load()
}
