package adapter

import (
	"context"
	"sync/atomic"

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
	// returned, 0 when none said; item is the QController item whose run
	// made it (ItemStarted), zero for a Controller's pass.
	Committed(controller string, ptr resource.PointerKey, version, read uint64, item resource.PointerKey)
}

// passLog is what the adapter keeps for a CommitLog: the log, and the
// revision the current pass first read.
type passLog struct {
	log  atomic.Pointer[CommitLog]
	read atomic.Uint64
	// items is set once an item's run carries its itemPass (ItemStarted):
	// until then no context is asked for one (a Controller's never is).
	items atomic.Bool
}

// itemPass is what one QController item's run read, while a CommitLog is
// set: carried by the item's context (ItemStarted), so that workers
// running items at once each note their own.
type itemPass struct {
	item resource.PointerKey
	read atomic.Uint64
}

type itemPassKey struct{}

// SetCommitLog makes l see the controller's commits from now on (nil:
// none). While it is set, the first read of each pass or item asks the
// state or the cache for the revision it reflects.
func (a *Adapter) SetCommitLog(l CommitLog) {
	if l == nil {
		a.pass.log.Store(nil)
		return
	}
	a.pass.log.Store(&l)
}

// PassStarted says a pass of a Controller starts (it calls EventCh to
// wait for its next wake-up): the reads before its commits are counted
// from here.
func (a *Adapter) PassStarted() { a.pass.read.Store(0) }

// ItemStarted says a QController's worker starts the run of item, and
// returns the context to run it with: while a CommitLog or a scheduler
// other than sched.Direct is set, it carries the item and what its run
// read (the commits made with it, and their write gates, name the item);
// ctx itself otherwise (nothing is allocated).
func (a *Adapter) ItemStarted(ctx context.Context, item resource.PointerKey) context.Context {
	if a.pass.log.Load() == nil && !a.gated {
		return ctx
	}
	if !a.pass.items.Load() {
		a.pass.items.Store(true)
	}
	return context.WithValue(ctx, itemPassKey{}, &itemPass{item: item})
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

// readOf returns where the pass or item of ctx notes its first read.
func (a *Adapter) readOf(ctx context.Context) *atomic.Uint64 {
	if p := a.itemOf(ctx); p != nil {
		return &p.read
	}
	return &a.pass.read
}

// firstRead reports whether a read is to say which revision it reflects:
// a CommitLog is set and the pass (or item) has not read yet (only its
// first read is noted, so that the others pay nothing).
func (a *Adapter) firstRead(ctx context.Context) bool {
	return a.pass.log.Load() != nil && a.readOf(ctx).Load() == 0
}

// getRevision returns opts asking for the revision a Get reflects in
// *rev, and its note to run once the Get returned: the pass's (or item's)
// first read that says is where it read the state (first: a revision the
// caller asks for itself wins, and the read is then not noted).
func (a *Adapter) getRevision(ctx context.Context, opts []state.GetOption) ([]state.GetOption, func()) {
	rev, read := new(uint64), a.readOf(ctx)
	return append([]state.GetOption{state.WithGetRevision(rev)}, opts...), func() { noteRead(read, *rev) }
}

// listRevision is getRevision for a List.
func (a *Adapter) listRevision(ctx context.Context, opts []state.ListOption) ([]state.ListOption, func()) {
	rev, read := new(uint64), a.readOf(ctx)
	return append([]state.ListOption{state.WithListRevision(rev)}, opts...), func() { noteRead(read, *rev) }
}

func noteRead(read *atomic.Uint64, rev uint64) {
	if rev != 0 {
		read.CompareAndSwap(0, rev)
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
	if p := a.itemOf(ctx); p != nil {
		(*l).Committed(a.name, resource.PointerOf(ptr), version, p.read.Load(), p.item)
		return
	}
	(*l).Committed(a.name, resource.PointerOf(ptr), version, a.pass.read.Load(), resource.PointerKey{})
}
