package work

import (
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// LastSeen keeps, for a QController's pending MapInput items, the last
// version of a mapped input the router saw when that version matters to
// MapInput: a destroyed input's last stored version (rule Q4: MapInput
// receives it, not a bare pointer), and the version of a destroy-ready
// output that queued an item, which becomes its last version if the output
// is destroyed before MapInput runs.
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
	seq  uint64
}

// Seq identifies the entry for [LastSeen.Release].
func (l Last) Seq() uint64 { return l.seq }

// Queued records the version of ptr whose change queues its map item:
// its last version when gone.
func (t *LastSeen) Queued(ptr resource.PointerKey, res resource.Resource, gone bool) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[resource.PointerKey]Last{}
	}
	if _, ok := t.m[ptr]; !ok {
		t.n.Add(1)
	}
	t.seq++
	t.m[ptr] = Last{Res: res, Gone: gone, seq: t.seq}
	t.mu.Unlock()
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

// Present forgets ptr's entry: the input exists (again), and its map item
// reads it from the state.
func (t *LastSeen) Present(ptr resource.PointerKey) {
	if t.n.Load() == 0 {
		return
	}
	t.mu.Lock()
	if _, ok := t.m[ptr]; ok {
		delete(t.m, ptr)
		t.n.Add(-1)
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
