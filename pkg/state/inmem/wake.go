package inmem

import (
	"slices"
	"sync/atomic"
)

// wakeFanout is how many parked watchers each wake-up passes the wake-up
// on to.
const wakeFanout = 2

// wakeGroup is the set of kind watchers that parked since the last write
// of their kind. The write that ends the set (by taking it) wakes
// wakeFanout of them, and every watcher that wakes passes the wake-up on to
// wakeFanout more: a write costs the writer O(1) whatever the number of
// watchers, and n watchers are all awake after about log2(n) steps, each
// taken by a goroutine that was going to run anyway.
type wakeGroup struct {
	// members are appended to under the kind's mu while the group is the
	// kind's parking group; once a write has taken the group, they never
	// change.
	members []*watcher
	// next is the index of the next member to wake.
	next atomic.Int64
}

// propagate wakes the next wakeFanout members. The group must have been
// taken by a write.
func (g *wakeGroup) propagate() {
	for range wakeFanout {
		i := g.next.Add(1) - 1
		if i >= int64(len(g.members)) {
			return
		}
		g.members[i].signal()
	}
}

// parkLocked adds w to the kind's parking group and returns it.
func (ks *kindStore) parkLocked(w *watcher) *wakeGroup {
	if ks.parking == nil {
		ks.parking = &wakeGroup{}
	}
	g := ks.parking
	g.members = append(g.members, w)
	return g
}

// unparkLocked is called by a parked watcher that leaves without being
// woken (its context is done): it leaves the group if no write took it
// yet, and otherwise passes the wake-up on, as a woken member would.
func (ks *kindStore) unparkLocked(w *watcher, g *wakeGroup) {
	if ks.parking == g {
		if i := slices.Index(g.members, w); i >= 0 {
			g.members = slices.Delete(g.members, i, i+1)
		}
		return
	}
	g.propagate()
}

// takeParkingLocked ends the current parking group, if any, for a write
// to wake once it has released mu.
func (ks *kindStore) takeParkingLocked() *wakeGroup {
	g := ks.parking
	ks.parking = nil
	return g
}

// wakeUp starts waking a group taken by a write, if any.
func wakeUp(g *wakeGroup) {
	if g != nil {
		g.propagate()
	}
}
