package adapter

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// CommitLog sees each write of a controller that committed, with the
// revision of the state its pass first read and the QController item it
// came from (a flight recorder, so that a replay lets the pass read what
// it read and takes the items in their order).
type CommitLog interface {
	// Committed is called on the controller's goroutine once the write
	// returned: the controller wrote ptr, which is now at version (for a
	// destroy, the version destroyed); read is the revision of the state
	// that the first read of its pass (see PassStarted, ItemStarted)
	// returned, 0 when none said; pass numbers the pass (or item run)
	// among the controller's, from 1; item is the QController item whose
	// run made it (ItemStarted), nil for a Controller's pass. ptr and item
	// are read during the call only (the log keeps neither).
	Committed(controller string, ptr resource.Pointer, version, read, pass uint64, item *resource.PointerKey)
}

// ReadLog is a CommitLog that also sees the reads of every pass, those
// of passes that commit nothing included.
type ReadLog interface {
	CommitLog
	// Read is called on the controller's goroutine once a read (a Get
	// or a List) of the pass numbered pass returned the state at
	// revision rev: the read numbered index in its pass (from 0; every
	// Get and List counts, also one that failed). It is called for the
	// pass's first read that says its revision and for each later one
	// whose revision or kind differs from the previous such read's; kind
	// is what it read (of a Get, the kind of the resource); item is as
	// Committed's.
	Read(controller string, pass uint64, index uint32, rev uint64, kind resource.KindKey, item *resource.PointerKey)
}

// BatchLog is a ReadLog that also sees the batches of changes the
// passes of an incremental Controller take (BatchTaken).
type BatchLog interface {
	ReadLog
	// Took is called on the controller's goroutine once the pass
	// numbered pass took a batch that is not full, whose changes are at
	// revision rev or below (the read floor then).
	Took(controller string, pass uint64, rev uint64)
}

// passLog is what the adapter keeps for a CommitLog: the log, and what
// the current pass of a Controller read.
type passLog struct {
	log atomic.Pointer[CommitLog]
	// reads is the log as a ReadLog, when it is one; batches as a
	// BatchLog.
	reads   atomic.Pointer[ReadLog]
	batches atomic.Pointer[BatchLog]
	passRead
	// seq numbers the passes and item runs.
	seq atomic.Uint64
	// items is set once an item's run carries its itemPass (ItemStarted):
	// until then no context is asked for one (a Controller's never is).
	items atomic.Bool
	// forwarded is set once a forwarder calls the Controller's EventCh
	// and starts its passes itself (ForwardPasses).
	forwarded atomic.Bool
	// note is the controller's own revision note (set with the first
	// CommitLog, never replaced): a read takes it while noteBusy is
	// unset (takeNote), one made meanwhile a pooled note.
	note     atomic.Pointer[revNote]
	noteBusy atomic.Bool
}

// passRead is what one pass (or item run) read, while a CommitLog is set.
type passRead struct {
	// read is the revision its first read that said returned, last the
	// last noted and lastKind the address of its kind's type, n how many
	// reads it made.
	read, last atomic.Uint64
	lastKind   atomic.Uintptr
	n          atomic.Uint32
	// pass is its number (seq).
	pass atomic.Uint64
}

// itemPass is what one QController item's run read, while a CommitLog is
// set or a scheduler other than sched.Direct is: carried by the item's
// context (ItemStarted), so that workers running items at once each note
// their own.
type itemPass struct {
	item resource.PointerKey
	passRead
}

type itemPassKey struct{}

// SetCommitLog makes l see the controller's commits from now on (nil:
// none); a ReadLog also sees every read. While it is set, each read asks
// the state or the cache for the revision it reflects.
func (a *Adapter) SetCommitLog(l CommitLog) {
	if l == nil {
		a.pass.log.Store(nil)
		a.pass.reads.Store(nil)
		a.pass.batches.Store(nil)
		return
	}
	if a.pass.note.Load() == nil {
		a.pass.note.Store(newRevNote(true))
	}
	if rl, ok := l.(ReadLog); ok {
		a.pass.reads.Store(&rl)
	} else {
		a.pass.reads.Store(nil)
	}
	if bl, ok := l.(BatchLog); ok {
		a.pass.batches.Store(&bl)
	} else {
		a.pass.batches.Store(nil)
	}
	a.pass.log.Store(&l)
}

// PassStarted says a pass of a Controller starts (it calls EventCh to
// wait for its next wake-up): the reads before its commits are counted
// from here. Once a forwarder starts the passes (ForwardPasses), it does
// nothing.
func (a *Adapter) PassStarted() {
	if a.pass.forwarded.Load() {
		return
	}
	a.startPass()
}

// startPass starts a pass of the Controller (PassStarted).
func (a *Adapter) startPass() {
	a.pass.read.Store(0)
	if a.pass.log.Load() == nil {
		return
	}
	a.pass.last.Store(0)
	a.pass.lastKind.Store(0)
	a.pass.n.Store(0)
	a.pass.pass.Store(a.pass.seq.Add(1))
}

// ItemStarted says a QController's worker starts the run of item, and
// returns the context to run it with: while a CommitLog or a scheduler
// other than sched.Direct is set, it carries the item and what its run
// read (the commits made with it, and their write gates, name the item);
// ctx itself otherwise (nothing is allocated).
func (a *Adapter) ItemStarted(ctx context.Context, item resource.PointerKey) context.Context {
	if a.pass.log.Load() == nil && !a.gated {
		return ctx
	}
	return a.passContext(ctx, item)
}

// OwnPass returns the context for the reads and writes of a Controller's
// goroutine other than the one that calls EventCh (destroy.Wrap's
// forwarder): while a CommitLog is set, they make a pass of their own,
// numbered now among the controller's, whose reads and commits are not
// counted in the pass EventCh started, nor its in theirs; ctx itself
// otherwise (nothing is allocated).
func (a *Adapter) OwnPass(ctx context.Context) context.Context {
	if a.pass.log.Load() == nil {
		return ctx
	}
	return a.passContext(ctx, resource.PointerKey{})
}

// passContext returns ctx carrying a pass of its own (of item, zero for
// a Controller's), numbered now.
func (a *Adapter) passContext(ctx context.Context, item resource.PointerKey) context.Context {
	if !a.pass.items.Load() {
		a.pass.items.Store(true)
	}
	p := &itemPass{item: item}
	p.pass.Store(a.pass.seq.Add(1))
	return context.WithValue(ctx, itemPassKey{}, p)
}

// itemOf returns the item run ctx carries, nil when none (without a look
// through ctx before any item's run carried one).
func (a *Adapter) itemOf(ctx context.Context) *itemPass {
	if !a.pass.items.Load() {
		return nil
	}
	p, _ := ctx.Value(itemPassKey{}).(*itemPass)
	return p
}

// passOf returns what the pass or item run of ctx read, and its item (nil
// for a Controller's pass).
func (a *Adapter) passOf(ctx context.Context) (*passRead, *resource.PointerKey) {
	if p := a.itemOf(ctx); p != nil {
		return &p.passRead, &p.item
	}
	return &a.pass.passRead, nil
}

// passed reports whether a read notes its revision: a CommitLog is set
// (one atomic load otherwise).
func (a *Adapter) passed() bool { return a.pass.log.Load() != nil }

// revNote is where a read's revision is told: its options ask for it,
// first among the caller's. A read takes the controller's own note when
// no other read of the controller holds it, else one from a pool (so
// that a read allocates nothing for it once the pool has notes). A
// buffer keeps the last caller's options until another's replace them (a
// pooled note is let go at the collector's next cycles): a read whose
// options are the very ones the buffer holds (the same function values,
// as constant options such as state.WithReadOnlyGet are) writes nothing
// into it.
type revNote struct {
	rev     uint64
	get     state.GetOption
	list    state.ListOption
	getBuf  []state.GetOption
	listBuf []state.ListOption
	// own is set on a controller's own note (passLog.note).
	own bool
}

var revNotes = sync.Pool{New: func() any { return newRevNote(false) }}

// newRevNote returns a note with its options and buffers.
func newRevNote(own bool) *revNote {
	n := &revNote{own: own}
	n.get, n.list = state.WithGetRevision(&n.rev), state.WithListRevision(&n.rev)
	n.getBuf, n.listBuf = []state.GetOption{n.get}, []state.ListOption{n.list}
	return n
}

// takeNote returns the note of a read's revision (a CommitLog is or was
// set): the controller's own when no other read holds it, a pooled one
// otherwise. giveNote gives it back.
func (a *Adapter) takeNote() *revNote {
	n := a.pass.note.Load()
	if n == nil || !a.pass.noteBusy.CompareAndSwap(false, true) {
		n = revNotes.Get().(*revNote)
	}
	n.rev = 0
	return n
}

// giveNote gives back a note takeNote returned, once its read is noted.
func (a *Adapter) giveNote(n *revNote) {
	if n.own {
		a.pass.noteBusy.Store(false)
		return
	}
	revNotes.Put(n)
}

// getOpts returns opts asking for the revision the Get reflects first (a
// revision the caller asks for itself wins, and the read then says none).
func (n *revNote) getOpts(opts []state.GetOption) []state.GetOption {
	if !sameFuncs(n.getBuf[1:], opts) {
		n.getBuf = append(n.getBuf[:1], opts...)
	}
	return n.getBuf
}

// listOpts is getOpts for a List.
func (n *revNote) listOpts(opts []state.ListOption) []state.ListOption {
	if !sameFuncs(n.listBuf[1:], opts) {
		n.listBuf = append(n.listBuf[:1], opts...)
	}
	return n.listBuf
}

// sameFuncs reports whether a and b hold the very same function values
// (each the same closure), read without a write.
func sameFuncs[F state.GetOption | state.ListOption](a, b []F) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if *(*unsafe.Pointer)(unsafe.Pointer(&a[i])) != *(*unsafe.Pointer)(unsafe.Pointer(&b[i])) {
			return false
		}
	}
	return true
}

// readDone notes the read of kind by n (takeNote; given back), which
// returned err, in its pass: its first revision, its count, and the
// ReadLog's note (a read that failed otherwise than not found is counted
// only). A read that panicked gives back no note: the controller's own
// then stays taken, and its later reads take pooled ones.
func (a *Adapter) readDone(ctx context.Context, n *revNote, kind resource.Kind, err error) {
	rev := n.rev
	a.giveNote(n)
	p, item := a.passOf(ctx)
	index := p.n.Add(1) - 1
	if rev == 0 || err != nil && !state.IsNotFoundError(err) {
		return
	}
	if p.read.Load() == 0 { // loads first: a locked instruction only when it changes
		p.read.CompareAndSwap(0, rev)
	}
	if p.pass.Load() == 0 { // it started before the CommitLog was set
		p.pass.CompareAndSwap(0, a.pass.seq.Add(1))
	}
	typ := kind.Type()
	addr := uintptr(unsafe.Pointer(unsafe.StringData(typ)))
	if p.last.Load() == rev && p.lastKind.Load() == addr {
		return
	}
	p.last.Store(rev)
	p.lastKind.Store(addr)
	if l := a.pass.reads.Load(); l != nil {
		(*l).Read(a.name, p.pass.Load(), index, rev, resource.KindOf(kind), item)
	}
}

// logCommit tells the CommitLog, when set, that the controller committed
// ptr at version (0: the state did not say; not logged), in the pass or
// item of ctx.
func (a *Adapter) logCommit(ctx context.Context, ptr resource.Pointer, version uint64) {
	l := a.pass.log.Load()
	if l == nil || version == 0 {
		return
	}
	p, item := a.passOf(ctx)
	(*l).Committed(a.name, ptr, version, p.read.Load(), p.pass.Load(), item)
}

// BatchTaken says the Controller's current pass took a batch of its
// change log that is not full: a BatchLog, when set, is told the read
// floor now (every change of the batch was routed after the floor was
// raised to its revision). Called on the goroutine that took it.
func (a *Adapter) BatchTaken() {
	l := a.pass.batches.Load()
	if l == nil {
		return
	}
	p := &a.pass.passRead
	if p.pass.Load() == 0 { // it started before the CommitLog was set
		p.pass.CompareAndSwap(0, a.pass.seq.Add(1))
	}
	(*l).Took(a.name, p.pass.Load(), a.floor.Load())
}
