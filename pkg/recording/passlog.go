package recording

import (
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
)

// passLogSize is how many controllers' commits the pass log holds the
// read revision of (rule RC9): the newest ones.
const passLogSize = 8192

// passLog holds, for the newest controllers' commits a tapped Runtime
// told of (runtime.CommitTap), the revision the pass that made each had
// read: a ring of pointer-free entries, written on the controllers'
// goroutines under its own lock (never the recorder's).
type passLog struct {
	mu   sync.Mutex
	seed maphash.Seed
	ring []passEntry // allocated at the first commit
	// items are the ring's entries' QController items, allocated at the
	// first commit of an item's run (a Runtime of Controllers never
	// does: the ring then holds no pointer for the collector to scan).
	items []resource.PointerKey
	next  int
	// kinds are the hashes of the kinds committed, by their strings'
	// addresses (a commit then hashes its ID alone).
	kinds [passLogKinds]kindHashed
	// passReads is the ring of the newest reads of every pass (rule
	// RC13), allocated at the first read; readItems their items, as
	// items; nextRead its next entry.
	passReads []readEntry
	readItems []resource.PointerKey
	nextRead  int
	// names are the controllers' names, numbered: an entry holds its
	// controller's number (no pointer).
	names []string
}

// readLogSize is how many reads of passes (rule RC13) the pass log holds:
// the newest ones.
const readLogSize = 16384

// readEntry is one read of a pass: its controller's number in
// passLog.names, its pass, its number in the pass, the revision it saw
// and its kind's hash.
type readEntry struct {
	pass, rev, kind uint64
	ctrl, index     uint32
}

// passLogKinds is how many kinds' hashes a pass log keeps.
const passLogKinds = 16

// kindHashed is a kind's hash, and its strings (kept: their addresses
// find it).
type kindHashed struct {
	ns   resource.Namespace
	typ  resource.Type
	hash uint64
	set  bool
}

// passEntry is one commit: its resource's hash, its version, what its
// pass read, and its pass (its number, its controller's in
// passLog.names).
type passEntry struct {
	key, version, read, pass uint64
	ctrl                     uint32
}

// passRead is what the pass of a commit read, and the QController item
// whose run made it (zero for a Controller's pass).
type passRead struct {
	read uint64
	item resource.PointerKey
}

func newPassLog() *passLog { return &passLog{seed: maphash.MakeSeed()} }

// hash hashes a resource's pointer: its ID's hash and its kind's (string
// by string: maphash.Comparable would copy the key to the heap).
func (l *passLog) hash(ptr resource.PointerKey) uint64 {
	return l.idHash(ptr) ^ l.kindHash(ptr.Namespace(), ptr.Type())
}

func (l *passLog) idHash(ptr resource.PointerKey) uint64 {
	const m = 0xc2b2ae3d27d4eb4f
	return maphash.String(l.seed, ptr.ID()) * m
}

func (l *passLog) kindHash(ns resource.Namespace, typ resource.Type) uint64 {
	const m = 0x9e3779b97f4a7c15
	return maphash.String(l.seed, ns) ^ maphash.String(l.seed, typ)*m
}

// kindHashLocked is kindHash, kept by the address of the kind's type
// (a kind's strings are interned or constants: the same few addresses
// come again and again); l.mu is held.
func (l *passLog) kindHashLocked(ptr resource.PointerKey) uint64 {
	return l.kindHashOfLocked(ptr.Namespace(), ptr.Type())
}

// kindHashOfLocked is kindHashLocked of a kind's strings.
func (l *passLog) kindHashOfLocked(ns resource.Namespace, typ resource.Type) uint64 {
	k := &l.kinds[(uintptr(unsafe.Pointer(unsafe.StringData(typ)))>>4)%passLogKinds]
	if !k.set || !sameData(k.typ, typ) || !sameData(k.ns, ns) {
		*k = kindHashed{ns: ns, typ: typ, hash: l.kindHash(ns, typ), set: true}
	}
	return k.hash
}

// add notes that a commit of ptr at version was made by a pass (or the
// run of item) that had read the state at revision read (0 and no item:
// unknown, not kept).
func (l *passLog) add(controller string, ptr resource.PointerKey, version, read, pass uint64, item resource.PointerKey) {
	if read == 0 && item == (resource.PointerKey{}) && pass == 0 {
		return
	}
	h := l.idHash(ptr)
	l.mu.Lock()
	h ^= l.kindHashLocked(ptr)
	if l.ring == nil {
		l.ring = make([]passEntry, passLogSize)
	}
	l.ring[l.next] = passEntry{key: h, version: version, read: read, pass: pass, ctrl: l.nameLocked(controller)}
	setItem(&l.items, passLogSize, l.next, item)
	l.next = (l.next + 1) % len(l.ring)
	l.mu.Unlock()
}

// setItem keeps item at i of *items, a ring of n entries allocated at the
// first item that is not zero (a Runtime of Controllers never has one:
// the log then holds no pointer for the collector to scan).
func setItem(items *[]resource.PointerKey, n, i int, item resource.PointerKey) {
	if *items == nil && item != (resource.PointerKey{}) {
		*items = make([]resource.PointerKey, n)
	}
	if *items != nil {
		(*items)[i] = item
	}
}

// passReads are the read revisions and items of the commits a pass log
// holds, by resource hash and version (several: a resource destroyed and
// created again starts its versions over).
type passReads struct {
	l *passLog
	m map[[2]uint64][]passRead
}

// reads returns what the log holds now.
func (l *passLog) reads() passReads {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[[2]uint64][]passRead, len(l.ring))
	for i, e := range l.ring {
		pr := passRead{read: e.read}
		if l.items != nil {
			pr.item = l.items[i]
		}
		if pr.read != 0 || pr.item != (resource.PointerKey{}) {
			k := [2]uint64{e.key, e.version}
			m[k] = append(m[k], pr)
		}
	}
	return passReads{l: l, m: m}
}

// of returns the read revision and the item of the commit of ptr at
// version, made at revision rev: the entry with the newest read the log
// holds before rev (a pass reads before it commits; an entry without a
// read counts as read at 0), zeros when it holds none.
func (r passReads) of(ptr resource.PointerKey, version, rev uint64) (read uint64, item resource.PointerKey) {
	if len(r.m) == 0 {
		return 0, item
	}
	found := false
	for _, e := range r.m[[2]uint64{r.l.hash(ptr), version}] {
		if e.read < rev && (!found || e.read > read) {
			read, item, found = e.read, e.item, true
		}
	}
	return read, item
}

// Committed implements runtime.CommitTap: a controller of the recorded
// Runtime committed ptr at version, its pass (or the run of item) having
// read the state at revision read.
func (l *passLog) Committed(controller string, ptr resource.PointerKey, version, read, pass uint64, item resource.PointerKey) {
	l.add(controller, ptr, version, read, pass, item)
}

// commitTapper is a Runtime whose controllers' commits a recorder can
// tap (*runtime.Runtime).
type commitTapper interface {
	TapCommits(t runtime.CommitTap) (func(), error)
}

// tapCommits taps the recorded Runtime's commits into the pass log (rule
// RC9), when it can be tapped: remove ends it.
func (r *Recorder) tapCommits() (remove func(), err error) {
	rt, ok := r.cfg.rt.(commitTapper)
	if !ok {
		return func() {}, nil
	}
	return rt.TapCommits(r.passes)
}

var _ runtime.PassTap = (*passLog)(nil)
