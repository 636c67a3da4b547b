package inmem

import (
	"slices"
	"sync/atomic"
	"time"
)

// writerWakes is how many parked watchers the write that takes a group
// wakes itself; wakeFanout is how many each woken watcher passes the
// wake-up on to.
const (
	writerWakes = 64
	wakeFanout  = 2
)

// wakeGroup is the set of kind watchers that parked since the last write
// of their kind. The write that ends the set (by taking it) wakes up to
// writerWakes of them, and every watcher that wakes passes the wake-up on
// to wakeFanout more: a write costs the writer at most writerWakes
// non-blocking sends whatever the number of watchers, and n watchers are
// all awake after about log2(n/writerWakes) more steps, each taken by a
// goroutine that was going to run anyway. Watchers park only when they
// have caught up, so a writer pays for the wake-ups only when its watchers
// are idle. (A deep wake-up tree makes the last watchers wait for several
// goroutine switches, and idle processors for several thread wake-ups:
// hence a wide first step; docs/performance.md, "Waking parked kind
// watchers".)
type wakeGroup struct {
	// members are appended to under the kind's mu while the group is the
	// kind's parking group; once a write has taken the group, they never
	// change.
	members []*kindWatcher
	// next is the index of the next member to wake.
	next atomic.Int64
}

// propagate wakes the next n members. The group must have been taken by a
// write.
func (g *wakeGroup) propagate(n int) {
	for range n {
		i := g.next.Add(1) - 1
		if i >= int64(len(g.members)) {
			return
		}
		g.members[i].signal()
	}
}

// parkLocked adds w to the kind's parking group.
func (ks *kindStore) parkLocked(w *kindWatcher) {
	if ks.parking == nil {
		ks.parking = &wakeGroup{}
	}
	g := ks.parking
	g.members = append(g.members, w)
	w.group.Store(g)
}

// unparkLocked is called by a parked watcher that leaves without being
// woken (its context is done): it leaves its group if no write took it
// yet, and otherwise passes the wake-up on, as a woken member would.
func (ks *kindStore) unparkLocked(w *kindWatcher) {
	g := w.group.Load()
	if ks.parking == g {
		if i := slices.Index(g.members, w); i >= 0 {
			g.members = slices.Delete(g.members, i, i+1)
		}
		return
	}
	g.propagate(wakeFanout)
}

// handOffGap is the least average time between the writes of a kind at
// which a write hands its change to parked watchers (see
// takeParkingLocked).
const handOffGap = 20 * time.Microsecond

// takeParkingLocked ends the current parking group, if any, at the
// write of rec, the kind's newest change. When handOff is set, a member
// that takes rec without its goroutine (see handOffLocked) stays parked,
// in the next group. The group of the others is returned, for the write
// to wake once it has released mu (nil when none is left).
//
// Handing a change over saves a goroutine switch per watcher and change:
// the consumer gets the event from the writer, without a watcher
// goroutine in between, which matters when every watcher is parked at
// every write. But the writer then does every watcher's send itself, and
// watchers that were handed every change never wake to deliver a backlog
// in batches, which slows a writer that writes without pause. So writes
// hand over only while they come handOffGap apart or more on average: a
// paced writer catching up in a short burst still hands over, a sustained
// stream of writes does not. (docs/performance.md, "Handing a change
// over".)
func (ks *kindStore) takeParkingLocked(rec *record, handOff bool) *wakeGroup {
	g := ks.parking
	ks.parking = nil
	if g == nil || !handOff {
		return g
	}
	woken := g.members[:0]
	for _, w := range g.members {
		if w.handOffLocked(rec) {
			ks.parkLocked(w)
		} else {
			woken = append(woken, w)
		}
	}
	clear(g.members[len(woken):])
	if g.members = woken; len(woken) == 0 {
		return nil
	}
	return g
}

// wakeUp starts waking a group taken by a write, if any.
func wakeUp(g *wakeGroup) {
	if g != nil {
		g.propagate(writerWakes)
	}
}
