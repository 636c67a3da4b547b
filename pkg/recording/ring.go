package recording

import (
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// ringWords is how many words an entry of a wordRing holds at most.
const ringWords = 5

// wordRing is a ring of the newest entries of ringWords words each,
// written without a lock (rules RC9 and RC13): a writer takes the next
// entry's number with one atomic add and writes the entry into its slot
// alone, the slot's stamp saying whose entry it holds and whether it is
// being written (a seqlock); a reader keeps an entry only when its stamp
// was the same before and after it read the words. Each entry is written
// by the one goroutine that made it. An entry whose slot a writer a lap
// away still writes is dropped (the ring holds the newest entries, but
// for that one). The slots are allocated at the first entry and hold no
// pointer. An entry's QController item (rare: most entries have none)
// is kept beside it under mu, with the entry's number.
type wordRing struct {
	// size is how many entries it holds, words how many words of each
	// (4 or ringWords; the others are zero).
	size, words int
	slots       atomic.Pointer[[]wordSlot]
	next        atomic.Uint64
	// mu protects items, allocated at the first entry with an item.
	mu    sync.Mutex
	items []numberedItem
}

// wordSlot is a slot of a wordRing: stamp is 0 (empty), 2n while it
// holds the entry numbered n (from 1), 2n+1 while that entry is written.
type wordSlot struct {
	stamp atomic.Uint64
	w     [ringWords]atomic.Uint64
}

// numberedItem is an entry's item and the entry's number.
type numberedItem struct {
	n    uint64
	item resource.PointerKey
}

func newWordRing(size, words int) *wordRing { return &wordRing{size: size, words: words} }

// slotsOf returns the slots, allocating them at the first entry.
func (r *wordRing) slotsOf() []wordSlot {
	if p := r.slots.Load(); p != nil {
		return *p
	}
	return r.allocate()
}

func (r *wordRing) allocate() []wordSlot {
	s := make([]wordSlot, r.size)
	if r.slots.CompareAndSwap(nil, &s) {
		return s
	}
	return *r.slots.Load()
}

// put writes the entry w (and its item, zero for none) as the newest.
func (r *wordRing) put(w *[ringWords]uint64, item resource.PointerKey) {
	slots := r.slotsOf()
	n := r.next.Add(1)
	i := int((n - 1) % uint64(len(slots)))
	s, stamp := &slots[i], 2*n
	old := s.stamp.Load()
	if old&1 != 0 || old > stamp || !s.stamp.CompareAndSwap(old, stamp|1) {
		return // a writer a lap away writes this slot
	}
	if item.Type() != "" {
		r.setItem(i, n, item)
	}
	s.w[0].Store(w[0])
	s.w[1].Store(w[1])
	s.w[2].Store(w[2])
	s.w[3].Store(w[3])
	if r.words > 4 {
		s.w[4].Store(w[4])
	}
	s.stamp.Store(stamp)
}

func (r *wordRing) setItem(i int, n uint64, item resource.PointerKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.items == nil {
		r.items = make([]numberedItem, r.size)
	}
	r.items[i] = numberedItem{n: n, item: item}
}

// each calls fn with every entry the ring holds whole, from the oldest
// slot on, with its item (zero for none).
func (r *wordRing) each(fn func(w *[ringWords]uint64, item resource.PointerKey)) {
	p := r.slots.Load()
	if p == nil {
		return
	}
	slots := *p
	r.mu.Lock()
	defer r.mu.Unlock()
	start := int(r.next.Load() % uint64(len(slots)))
	var w [ringWords]uint64
	for k := range slots {
		i := (start + k) % len(slots)
		s := &slots[i]
		stamp := s.stamp.Load()
		if stamp == 0 || stamp&1 != 0 {
			continue
		}
		for j := range r.words {
			w[j] = s.w[j].Load()
		}
		if s.stamp.Load() != stamp {
			continue // rewritten meanwhile: its entry left the ring
		}
		var item resource.PointerKey
		if r.items != nil && r.items[i].n == stamp/2 {
			item = r.items[i].item
		}
		fn(&w, item)
	}
}
