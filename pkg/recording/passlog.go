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

// passLogSize is how many commits of each controller the pass log holds
// the read revision of (rule RC9): its newest ones.
const passLogSize = 8192

// passLog holds, for the newest commits of each controller of a tapped
// Runtime (runtime.CommitTap), the revision the pass that made each had
// read, and the newest reads of each controller's passes (runtime.PassTap,
// rule RC13): each controller's in a log of its own (ctrlLog), written on
// its goroutines under that log's lock (never the recorder's, nor
// another controller's).
type passLog struct {
	seed maphash.Seed
	// commitMax and readMax are how many commits and reads each
	// controller's log holds at most; chunks how many chunks of entries
	// the logs of every controller may still allocate (passLogBytes).
	commitMax, readMax int
	chunks             atomic.Int64
	// ctrls are the controllers' logs, numbered (an entry of a read names
	// its controller by the log it is in): replaced whole under mu when
	// one is added. ctrlCells find one by its name's address (ctrlOf):
	// set once each, never replaced.
	ctrls     atomic.Pointer[[]*ctrlLog]
	ctrlCells [passLogNames]atomic.Pointer[namedCtrl]
	// kinds are the kinds committed or read, numbered (a read's entry
	// holds its kind's number), with their hashes (a commit's key):
	// replaced whole under mu when one is added. kindCells find one by
	// its type's address (kindOf): set once each, never replaced.
	kinds     atomic.Pointer[[]*kindNumbered]
	kindCells [passLogKinds]atomic.Pointer[kindNumbered]
	mu        sync.Mutex
}

// ctrlLog is one controller's part of a pass log: its commits (an entry
// is the commit's key (commitKey), what its pass read and its pass) and
// its passes' reads (an entry is its pass, the revision it saw, and its
// kind's number and its number in its pass), each a ring of its own.
type ctrlLog struct {
	name string
	n    uint32
	// mu protects the rings: a controller's goroutines log under it, a
	// take copies them under it.
	mu      sync.Mutex
	commits entryRing
	reads   entryRing
	// lastCommit and lastRead are the kinds of its last commit and its
	// last read (a controller's kinds seldom change), under mu.
	lastCommit, lastRead *kindNumbered
}

// kindLocked returns the kind's number and hash: *last when its strings
// are the same, else from l (then kept in *last); c.mu is held.
func (c *ctrlLog) kindLocked(l *passLog, last **kindNumbered, ns resource.Namespace, typ resource.Type) *kindNumbered {
	if k := *last; k != nil && sameData(k.typ, typ) && sameData(k.ns, ns) {
		return k
	}
	*last = l.kindOf(ns, typ)
	return *last
}

// namedCtrl is a controller's log by a string of its name (kept: its
// address finds it).
type namedCtrl struct {
	name string
	log  *ctrlLog
}

// passLogNames is how many controllers' names a pass log finds by their
// address (the others by their bytes).
const passLogNames = 16

// readLogSize is how many reads of passes (rule RC13) each controller's
// log holds: its newest ones.
const readLogSize = 16384

// readEntry is one read of a pass: its pass, the revision it saw, its
// kind's number in passLog.kinds and its number in the pass.
type readEntry struct {
	pass, rev   uint64
	kind, index uint32
}

func readEntryOf(w [entryWords]uint64) readEntry {
	return readEntry{pass: w[0], rev: w[1], kind: uint32(w[2] >> 32), index: uint32(w[2])}
}

// passLogKinds is how many kinds a pass log finds by their type's
// address (the others by their strings).
const passLogKinds = 64

// kindNumbered is a kind's strings (kept: their addresses find it), its
// number and its hash.
type kindNumbered struct {
	ns   resource.Namespace
	typ  resource.Type
	hash uint64
	n    uint32
}

// passEntry is one commit: its key (commitKey), what its pass read, and
// its pass.
type passEntry struct {
	key, read, pass uint64
}

func passEntryOf(w [entryWords]uint64) passEntry {
	return passEntry{key: w[0], read: w[1], pass: w[2]}
}

// passRead is what the pass of a commit read, and the QController item
// whose run made it (zero for a Controller's pass).
type passRead struct {
	read uint64
	item resource.PointerKey
}

// passLogBytes bounds the entries of a pass log's rings, for every
// controller (rules RC9, RC13; a ring's first chunk aside).
const passLogBytes = 8 << 20

func newPassLog() *passLog {
	l := &passLog{seed: maphash.MakeSeed(), commitMax: passLogSize, readMax: readLogSize}
	l.chunks.Store(passLogBytes / (ringChunk * entryWords * 8))
	return l
}

// commitKey is the key of a commit of a resource whose hash is h
// (passLog.hash) at version: a commit's entry holds it, a take finds the
// commit of a change by it.
func commitKey(h, version uint64) uint64 {
	const m = 0xff51afd7ed558ccd
	return h + version*m
}

// hash hashes a resource's pointer: its ID's hash and its kind's (string
// by string: maphash.Comparable would copy the key to the heap).
func (l *passLog) hash(ptr resource.PointerKey) uint64 {
	return l.idHashOf(ptr.ID()) ^ l.kindHash(ptr.Namespace(), ptr.Type())
}

func (l *passLog) idHashOf(id resource.ID) uint64 {
	const m = 0xc2b2ae3d27d4eb4f
	return maphash.String(l.seed, id) * m
}

func (l *passLog) kindHash(ns resource.Namespace, typ resource.Type) uint64 {
	const m = 0x9e3779b97f4a7c15
	return maphash.String(l.seed, ns) ^ maphash.String(l.seed, typ)*m
}

// kindOf returns the kind's number and hash, numbering it: found by the
// address of its type (a kind's strings are interned or constants: the
// same few addresses come again and again) in one of four cells from the
// address's own, else by its strings.
func (l *passLog) kindOf(ns resource.Namespace, typ resource.Type) *kindNumbered {
	at := addrCell(typ, passLogKinds)
	if k := l.kindCells[at].Load(); k != nil && sameData(k.typ, typ) && sameData(k.ns, ns) {
		return k
	}
	for i := range 4 {
		c := &l.kindCells[(at+i)%passLogKinds]
		k := c.Load()
		if k == nil {
			if k = l.numberKind(ns, typ); !sameData(k.typ, typ) || !sameData(k.ns, ns) {
				k = &kindNumbered{ns: ns, typ: typ, hash: k.hash, n: k.n} // this address's
			}
			if c.CompareAndSwap(nil, k) {
				return k
			}
			k = c.Load()
		}
		if sameData(k.typ, typ) && sameData(k.ns, ns) {
			return k
		}
	}
	return l.numberKind(ns, typ)
}

// numberKind is kindOf without the cells: the kind of those numbered
// whose strings are ns and typ, numbered now if none is; a kind found by
// its strings' bytes keeps the strings it was numbered with.
func (l *passLog) numberKind(ns resource.Namespace, typ resource.Type) *kindNumbered {
	find := func(kinds []*kindNumbered) int {
		return slices.IndexFunc(kinds, func(k *kindNumbered) bool { return k.typ == typ && k.ns == ns })
	}
	var kinds []*kindNumbered
	if p := l.kinds.Load(); p != nil {
		kinds = *p
	}
	if i := find(kinds); i >= 0 {
		return kinds[i]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	kinds = nil
	if p := l.kinds.Load(); p != nil {
		kinds = *p
	}
	if i := find(kinds); i >= 0 {
		return kinds[i]
	}
	k := &kindNumbered{ns: ns, typ: typ, hash: l.kindHash(ns, typ), n: uint32(len(kinds))}
	kinds = append(slices.Clip(kinds), k)
	l.kinds.Store(&kinds)
	return k
}

// ctrlOf returns the log of the controller name, adding it: found by its
// bytes' address first (a controller's name is one string for all its
// calls), in the cell of that address when one was set (set once each,
// never replaced).
func (l *passLog) ctrlOf(name string) *ctrlLog {
	c := &l.ctrlCells[addrCell(name, passLogNames)]
	if k := c.Load(); k != nil && sameData(k.name, name) {
		return k.log
	}
	k := l.numberCtrl(name)
	c.CompareAndSwap(nil, &namedCtrl{name: name, log: k})
	return k
}

// numberCtrl is ctrlOf without the cells.
func (l *passLog) numberCtrl(name string) *ctrlLog {
	find := func(ctrls []*ctrlLog) int {
		return slices.IndexFunc(ctrls, func(c *ctrlLog) bool { return c.name == name })
	}
	if p := l.ctrls.Load(); p != nil {
		if i := find(*p); i >= 0 {
			return (*p)[i]
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var ctrls []*ctrlLog
	if p := l.ctrls.Load(); p != nil {
		ctrls = *p
	}
	if i := find(ctrls); i >= 0 {
		return ctrls[i]
	}
	c := &ctrlLog{name: name, n: uint32(len(ctrls)), commits: newEntryRing(l.commitMax, &l.chunks), reads: newEntryRing(l.readMax, &l.chunks)}
	ctrls = append(slices.Clip(ctrls), c)
	l.ctrls.Store(&ctrls)
	return c
}

// addrCell returns the cell, of n (a power of two up to 256), of the
// address of s's bytes.
func addrCell(s string, n int) int {
	const m = 0x9e3779b97f4a7c15
	return int(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))*m>>56) & (n - 1)
}

// ctrlsNow returns the controllers' logs numbered so far.
func (l *passLog) ctrlsNow() []*ctrlLog {
	if p := l.ctrls.Load(); p != nil {
		return *p
	}
	return nil
}

// kindsNow returns the kinds numbered so far.
func (l *passLog) kindsNow() []*kindNumbered {
	if p := l.kinds.Load(); p != nil {
		return *p
	}
	return nil
}

// copies returns copies of the controller's rings of commits and reads.
func (c *ctrlLog) copies() (commits, reads ringCopy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits.copyOf(), c.reads.copyOf()
}

// add notes that a commit of the resource (ns, typ, id) at version was
// made by a pass (or the run of item; nil or zero: none) that had read
// the state at revision read (0 and no item: unknown, not kept).
func (l *passLog) add(controller string, ns resource.Namespace, typ resource.Type, id resource.ID, version, read, pass uint64, item *resource.PointerKey) {
	if read == 0 && (item == nil || item.Type() == "") && pass == 0 {
		return
	}
	h := l.idHashOf(id)
	c := l.ctrlOf(controller)
	c.mu.Lock()
	key := commitKey(h^c.kindLocked(l, &c.lastCommit, ns, typ).hash, version)
	c.commits.put(key, read, pass, item)
	c.mu.Unlock()
}

// passReads are the read revisions and items of the commits a pass log
// holds, by commitKey (several: a resource destroyed and created again
// starts its versions over).
type passReads struct {
	l *passLog
	m map[uint64][]passRead
}

// readsNow returns what the log holds now.
func (l *passLog) readsNow() passReads {
	m := make(map[uint64][]passRead)
	for _, c := range l.ctrlsNow() {
		commits, _ := c.copies()
		for i := range commits.len() {
			w, item := commits.at(i)
			if e := passEntryOf(w); e.read != 0 || item.Type() != "" {
				m[e.key] = append(m[e.key], passRead{read: e.read, item: item})
			}
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
	for _, e := range r.m[commitKey(r.l.hash(ptr), version)] {
		if e.read < rev && (!found || e.read > read) {
			read, item, found = e.read, e.item, true
		}
	}
	return read, item
}

// Committed implements runtime.CommitTap: a controller of the recorded
// Runtime committed ptr at version, its pass (or the run of item) having
// read the state at revision read. It keeps neither ptr nor item: their
// strings only.
func (l *passLog) Committed(controller string, ptr resource.Pointer, version, read, pass uint64, item *resource.PointerKey) {
	if md, ok := ptr.(*resource.Metadata); ok { // the adapter's writes: one call
		ns, typ, id := md.Identity()
		l.add(controller, ns, typ, id, version, read, pass, item)
		return
	}
	l.add(controller, ptr.Namespace(), ptr.Type(), ptr.ID(), version, read, pass, item)
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
