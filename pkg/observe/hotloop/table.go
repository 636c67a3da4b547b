package hotloop

// table holds the resources committed once or twice in the last two
// windows, none of them with a stat in Detector.res, each as the commits
// it made (see twice): a set-associative table of hash keys (see hashKey),
// ways entries a bucket, grown from minSlots entries up to maxSlots and
// never beyond, so that what the detector keeps of resources committed
// once or twice is bounded whatever their number. An entry is live while
// its last commit is of the current window or the one before (it may be
// the cause of the next window's commits); a stale entry is free. A
// resource put in a full bucket of a table at maxSlots takes the place of
// the entry whose last commit is oldest: the put reports that eviction,
// which the Detector counts (see Stats.Dropped). Nothing in it is a
// pointer: the collector does not scan it.
type table struct {
	// keys are the entries' keys, 0 for no entry (hashOf never returns
	// 0); vals their commits and lasts the stamp of their last commit
	// (see clock), by the same index: a bucket's keys and stamps are read
	// without touching its commits.
	keys  []hashKey
	lasts []uint32
	vals  []twice
	// mask selects the bucket of a key k: the entries from
	// (k & mask) * ways on.
	mask uint64
	// newest is the window of the newest commit put in: every entry is
	// stale once the current window is past newest + 1.
	newest uint64
}

const (
	// ways is the number of entries of a bucket: one cache line of keys.
	ways = 8
	// minSlots is the size a table starts with and goes back to once
	// every entry is stale; maxSlots the size it never grows beyond
	// (704 KiB of entries).
	minSlots = 1 << 8
	maxSlots = 1 << 14
)

// clock orders the commits the detector counts: seq is the number of
// them so far; cur and prev what it was when the current window and the
// one before began. A commit is stamped with the low 32 bits of its seq
// (once.stamp): its age, in commits, tells its window, for as long as
// fewer than 2³² commits come in two windows.
type clock struct{ seq, cur, prev uint64 }

// age returns how many commits came after the one stamped stamp.
func (c *clock) age(stamp uint32) uint64 { return uint64(uint32(c.seq) - stamp) }

// current reports whether o is of the current window.
func (c *clock) current(o once) bool { return c.age(o.stamp) < c.seq-c.cur }

// live reports whether the commit stamped stamp is of the current window
// or the one before.
func (c *clock) live(stamp uint32) bool { return c.age(stamp) < c.seq-c.prev }

// newTable returns an empty table of slots entries (a power of two, at
// least ways).
func newTable(slots int) table {
	return table{keys: make([]hashKey, slots), lasts: make([]uint32, slots), vals: make([]twice, slots), mask: uint64(slots/ways - 1)}
}

// find returns the index of the live entry of key h, -1 when there is
// none.
func (t *table) find(h hashKey, c *clock) int {
	b := int(uint64(h)&t.mask) * ways
	keys := (*[ways]hashKey)(t.keys[b : b+ways])
	for j, k := range keys {
		if k == h {
			if c.live(t.lasts[b+j]) {
				return b + j
			}
			return -1
		}
	}
	return -1
}

// put adds the entry of key h, which has no live entry, holding its first
// commit o, in window w, and reports whether it took the place of a live
// entry. It grows the table rather than evict while the table is below
// maxSlots.
func (t *table) put(h hashKey, o once, w uint64, c *clock) (evicted bool) {
	i, live := t.slotFor(h, c)
	for live && len(t.keys) < maxSlots {
		t.grow(c)
		i, live = t.slotFor(h, c)
	}
	t.keys[i], t.lasts[i], t.vals[i] = h, o.stamp, twice{o}
	t.newest = w
	return live
}

// again adds the second commit o of the entry at index i, in window w.
func (t *table) again(i int, o once, w uint64) {
	t.vals[i][1], t.lasts[i] = o, o.stamp
	t.newest = w
}

// slotFor returns where to put the key h in its bucket: h's own entry
// (stale) or a free one, the first in the bucket; when there is none, the
// entry whose last commit is oldest, with live true.
func (t *table) slotFor(h hashKey, c *clock) (i int, live bool) {
	b := int(uint64(h)&t.mask) * ways
	keys := (*[ways]hashKey)(t.keys[b : b+ways])
	lasts := (*[ways]uint32)(t.lasts[b : b+ways])
	now, span := uint32(c.seq), c.seq-c.prev
	victim, oldest := 0, uint64(0)
	for j, k := range keys {
		age := uint64(now - lasts[j])
		if k == h || k == 0 || age >= span {
			return b + j, false
		}
		if age > oldest {
			victim, oldest = j, age
		}
	}
	return b + victim, true
}

// grow doubles the table, keeping its live entries: the entries of a
// bucket go to two buckets of the new table, so none is evicted.
func (t *table) grow(c *clock) {
	g := newTable(2 * len(t.keys))
	g.newest = t.newest
	for i, h := range t.keys {
		if h != 0 && c.live(t.lasts[i]) {
			j, _ := g.slotFor(h, c)
			g.keys[j], g.lasts[j], g.vals[j] = h, t.lasts[i], t.vals[i]
		}
	}
	*t = g
}

// stale reports whether every entry is stale in the window w.
func (t *table) stale(w uint64) bool { return t.newest+1 < w }

// shrink makes t its starting size once every entry is stale in the
// window w: a burst of commits of many resources leaves no memory behind
// once it is over.
func (t *table) shrink(w uint64) {
	if len(t.keys) > minSlots && t.stale(w) {
		*t = newTable(minSlots)
	}
}

// remove drops the entry at index i.
func (t *table) remove(i int) { t.keys[i], t.lasts[i], t.vals[i] = 0, 0, twice{} }
