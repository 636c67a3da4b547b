package work

import (
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// LastSeen keeps, for a QController's pending MapInput items, the
// versions of a mapped input the router saw when they matter to MapInput:
// a destroyed input's last stored version (rule Q4: MapInput receives it,
// not a bare pointer); the version of a destroy-ready output that queued
// an item, which becomes its last version if the output is destroyed
// before MapInput runs; and the version before the first metadata change
// not yet mapped (rule Q4, extended: MapInput receives it as the
// previous version, so that a relabelled input requeues what it left).
//
// The router records entries in the order of each resource's changes (one
// goroutine per kind); the workers read an entry when MapInput starts and
// release it when the item is done. Every entry that queues an item gets a
// new sequence number, so that an item done releases only the entry it
// ran with: one recorded meanwhile queued the item again, whose next run
// releases it. Entries are therefore at most the pending map items.
type LastSeen struct {
	// n is the number of entries: the router's common case (no entry)
	// costs an atomic load. Only the router adds entries (one goroutine
	// per kind, so per pointer), which makes the check exact for a
	// pointer's own entry.
	n   atomic.Int64
	mu  sync.Mutex
	seq uint64
	m   map[resource.PointerKey]Last
}

// Last is the last version of a mapped input that an entry of [LastSeen]
// holds.
type Last struct {
	// Res is the version, as the state's event carried it (a shared,
	// read-only snapshot).
	Res resource.Resource
	// Gone is set when Res is the last version of a destroyed input.
	Gone bool
	// Prev is the version before the first metadata change not yet
	// mapped, nil when there was none.
	Prev resource.Resource
	seq  uint64
}

// Held reports whether l is an entry (one to release once its item is
// done).
func (l Last) Held() bool { return l.seq != 0 }

// Seq identifies the entry for [LastSeen.Release].
func (l Last) Seq() uint64 { return l.seq }

// Queued records the version of ptr whose change queues its map item:
// its last version when gone. prev, when not nil, is the version before
// that change, whose metadata differ; an entry's first prev is kept
// until its item is done.
func (t *LastSeen) Queued(ptr resource.PointerKey, res resource.Resource, gone bool, prev resource.Resource) {
	t.queue(ptr, func(l Last) Last {
		if l.Prev != nil {
			prev = l.Prev
		}
		return Last{Res: res, Gone: gone, Prev: prev}
	})
}

// Changed records that a change of ptr that queues its map item changed
// its metadata: prev is the version before it. An entry's first prev is
// kept; a destroyed version (the input was created again) becomes the
// previous one when there is none.
func (t *LastSeen) Changed(ptr resource.PointerKey, prev resource.Resource) {
	t.queue(ptr, func(l Last) Last {
		switch {
		case l.Prev != nil:
			prev = l.Prev
		case l.Gone:
			prev = l.Res
		}
		return Last{Prev: prev}
	})
}

// queue replaces ptr's entry (the zero Last when none) with next's
// result, numbered anew: the change it records queues the item.
func (t *LastSeen) queue(ptr resource.PointerKey, next func(Last) Last) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[resource.PointerKey]Last{}
	}
	l, ok := t.m[ptr]
	if !ok {
		t.n.Add(1)
	}
	t.seq++
	l = next(l)
	l.seq = t.seq
	t.m[ptr] = l
}

// Destroyed records that ptr was destroyed, with res its last version,
// when an entry of ptr waits for its item (a change that queues no item
// of its own: a destroy-ready input's destruction).
func (t *LastSeen) Destroyed(ptr resource.PointerKey, res resource.Resource) {
	if t.n.Load() == 0 {
		return
	}
	t.mu.Lock()
	if l, ok := t.m[ptr]; ok {
		t.m[ptr] = Last{Res: res, Gone: true, seq: l.seq}
	}
	t.mu.Unlock()
}

// Present records that ptr exists (again): its map item reads it from
// the state. The entry keeps only its previous version (a destroyed
// version, when the input was created again, becomes the previous one
// when there is none), and goes when there is none.
func (t *LastSeen) Present(ptr resource.PointerKey) {
	if t.n.Load() == 0 {
		return
	}
	t.mu.Lock()
	if l, ok := t.m[ptr]; ok {
		if l.Prev == nil && l.Gone {
			l.Prev = l.Res
		}
		if l.Prev == nil {
			delete(t.m, ptr)
			t.n.Add(-1)
		} else {
			t.m[ptr] = Last{Prev: l.Prev, seq: l.seq}
		}
	}
	t.mu.Unlock()
}

// Get returns ptr's entry.
func (t *LastSeen) Get(ptr resource.PointerKey) (Last, bool) {
	if t.n.Load() == 0 {
		return Last{}, false
	}
	t.mu.Lock()
	l, ok := t.m[ptr]
	t.mu.Unlock()
	return l, ok
}

// Release forgets ptr's entry if it is still the one numbered seq (the
// map item that ran with it is done: it succeeded, or it was parked until
// a new change queues it again).
func (t *LastSeen) Release(ptr resource.PointerKey, seq uint64) {
	t.mu.Lock()
	if l, ok := t.m[ptr]; ok && l.seq == seq {
		delete(t.m, ptr)
		t.n.Add(-1)
	}
	t.mu.Unlock()
}

// Len returns the number of entries.
func (t *LastSeen) Len() int { return int(t.n.Load()) }
