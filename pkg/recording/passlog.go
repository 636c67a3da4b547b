package recording

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
)

// passLogSize is how many controllers' commits the pass log holds the
// read revision of (rule RC9): the newest ones.
const passLogSize = 8192

// passLog holds, for the newest controllers' commits a tapped Runtime
// told of (runtime.CommitTap), the revision the pass that made each had
// read, and the newest reads of every pass (runtime.PassTap, rule RC13):
// two rings of pointer-free entries (wordRing), written on the
// controllers' goroutines without a lock (never the recorder's).
type passLog struct {
	seed maphash.Seed
	// commits are the commits: an entry is its resource's hash, its
	// version, what its pass read, its pass and its controller's number
	// in names (passEntry).
	commits *wordRing
	// reads are the reads of passes: an entry is its pass, its revision,
	// its kind's hash, and its controller's number and its number in its
	// pass (readEntry).
	reads *wordRing
	// kinds are the hashes of the kinds committed or read, by their
	// strings' addresses (a commit then hashes its ID alone): set once
	// each, never replaced.
	kinds [passLogKinds]atomic.Pointer[kindHashed]
	// names are the controllers' names, numbered (an entry holds its
	// controller's number, no pointer): replaced whole under mu when a
	// name is added.
	names atomic.Pointer[[]string]
	// nameCells find a name's number by its bytes' address (nameOf).
	nameCells [passLogNames]atomic.Pointer[numberedName]
	mu        sync.Mutex
}

// passLogNames is how many controllers' names a pass log finds by their
// address (the others by their bytes).
const passLogNames = 16

// numberedName is a controller's name and its number.
type numberedName struct {
	name string
	n    uint32
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

func (e *readEntry) words() [ringWords]uint64 {
	return [ringWords]uint64{e.pass, e.rev, e.kind, uint64(e.ctrl)<<32 | uint64(e.index)}
}

func readEntryOf(w *[ringWords]uint64) readEntry {
	return readEntry{pass: w[0], rev: w[1], kind: w[2], ctrl: uint32(w[3] >> 32), index: uint32(w[3])}
}

// passLogKinds is how many kinds' hashes a pass log keeps (the others
// are hashed at each commit or read).
const passLogKinds = 64

// kindHashed is a kind's hash, and its strings (kept: their addresses
// find it).
type kindHashed struct {
	ns   resource.Namespace
	typ  resource.Type
	hash uint64
}

// passEntry is one commit: its resource's hash, its version, what its
// pass read, and its pass (its number, its controller's in
// passLog.names).
type passEntry struct {
	key, version, read, pass uint64
	ctrl                     uint32
}

func (e *passEntry) words() [ringWords]uint64 {
	return [ringWords]uint64{e.key, e.version, e.read, e.pass, uint64(e.ctrl)}
}

func passEntryOf(w *[ringWords]uint64) passEntry {
	return passEntry{key: w[0], version: w[1], read: w[2], pass: w[3], ctrl: uint32(w[4])}
}

// passRead is what the pass of a commit read, and the QController item
// whose run made it (zero for a Controller's pass).
type passRead struct {
	read uint64
	item resource.PointerKey
}

func newPassLog() *passLog {
	return &passLog{seed: maphash.MakeSeed(), commits: newWordRing(passLogSize, 5), reads: newWordRing(readLogSize, 4)}
}

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

// kindHashOf is kindHash, kept by the address of the kind's type (a
// kind's strings are interned or constants: the same few addresses come
// again and again) in one of four cells from the address's own; a kind
// that finds none free is hashed each time.
func (l *passLog) kindHashOf(ns resource.Namespace, typ resource.Type) uint64 {
	at := addrCell(typ, passLogKinds)
	if k := l.kinds[at].Load(); k != nil && sameData(k.typ, typ) && sameData(k.ns, ns) {
		return k.hash
	}
	for i := range 4 {
		c := &l.kinds[(at+i)%passLogKinds]
		k := c.Load()
		if k == nil {
			k = &kindHashed{ns: ns, typ: typ, hash: l.kindHash(ns, typ)}
			if c.CompareAndSwap(nil, k) {
				return k.hash
			}
			k = c.Load()
		}
		if sameData(k.typ, typ) && sameData(k.ns, ns) {
			return k.hash
		}
	}
	return l.kindHash(ns, typ)
}

// nameOf returns the number of the controller name in l.names, adding
// it: found by its bytes' address first (a controller's name is one
// string for all its calls), in the cell of that address when one was
// set (set once each, never replaced).
func (l *passLog) nameOf(name string) uint32 {
	c := &l.nameCells[addrCell(name, passLogNames)]
	if k := c.Load(); k != nil && sameData(k.name, name) {
		return k.n
	}
	n := l.numberOf(name)
	c.CompareAndSwap(nil, &numberedName{name: name, n: n})
	return n
}

// numberOf is nameOf without the cells.
func (l *passLog) numberOf(name string) uint32 {
	if p := l.names.Load(); p != nil {
		if i := slices.Index(*p, name); i >= 0 {
			return uint32(i)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	if p := l.names.Load(); p != nil {
		names = *p
	}
	if i := slices.Index(names, name); i >= 0 {
		return uint32(i)
	}
	names = append(slices.Clip(names), name)
	l.names.Store(&names)
	return uint32(len(names) - 1)
}

// addrCell returns the cell, of n (a power of two up to 256), of the
// address of s's bytes.
func addrCell(s string, n int) int {
	const m = 0x9e3779b97f4a7c15
	return int(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))*m>>56) & (n - 1)
}

// namesNow returns the controllers' names numbered so far.
func (l *passLog) namesNow() []string {
	if p := l.names.Load(); p != nil {
		return *p
	}
	return nil
}

// add notes that a commit of ptr at version was made by a pass (or the
// run of item) that had read the state at revision read (0 and no item:
// unknown, not kept).
func (l *passLog) add(controller string, ptr *resource.PointerKey, version, read, pass uint64, item *resource.PointerKey) {
	if read == 0 && item.Type() == "" && pass == 0 {
		return
	}
	e := passEntry{key: l.idHash(*ptr) ^ l.kindHashOf(ptr.Namespace(), ptr.Type()), version: version, read: read, pass: pass, ctrl: l.nameOf(controller)}
	w := e.words()
	l.commits.put(&w, *item)
}

// passReads are the read revisions and items of the commits a pass log
// holds, by resource hash and version (several: a resource destroyed and
// created again starts its versions over).
type passReads struct {
	l *passLog
	m map[[2]uint64][]passRead
}

// reads returns what the log holds now.
func (l *passLog) readsNow() passReads {
	m := make(map[[2]uint64][]passRead)
	l.commits.each(func(w *[ringWords]uint64, item resource.PointerKey) {
		e := passEntryOf(w)
		if e.read != 0 || item.Type() != "" {
			k := [2]uint64{e.key, e.version}
			m[k] = append(m[k], passRead{read: e.read, item: item})
		}
	})
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
	l.add(controller, &ptr, version, read, pass, &item)
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

var _ runtime.BatchTap = (*passLog)(nil)
