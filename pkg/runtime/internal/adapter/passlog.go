package adapter

import (
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// CommitLog sees each write of a controller that committed, with the
// revision of the state its pass first read (a flight recorder, so
// that a replay lets the pass read what it read).
type CommitLog interface {
	// Committed is called on the controller's goroutine once the write
	// returned: the controller wrote ptr, which is now at version (for a
	// destroy, the version destroyed); read is the revision of the state
	// that the first read of its pass (see PassStarted) returned, 0 when
	// none said.
	Committed(controller string, ptr resource.PointerKey, version, read uint64)
}

// passLog is what the adapter keeps for a CommitLog: the log, and the
// revision the current pass first read.
type passLog struct {
	log  atomic.Pointer[CommitLog]
	read atomic.Uint64
}

// SetCommitLog makes l see the controller's commits from now on (nil:
// none). While it is set, every read of the controller asks the state or
// the cache for the revision it reflects.
func (a *Adapter) SetCommitLog(l CommitLog) {
	if l == nil {
		a.pass.log.Store(nil)
		return
	}
	a.pass.log.Store(&l)
}

// PassStarted says a pass of the controller starts (a Controller calls
// EventCh to wait for its next wake-up; a QController's worker takes an
// item): the reads before its commits are counted from here. With
// QController workers running items at once, the first read of any of
// them.
func (a *Adapter) PassStarted() { a.pass.read.Store(0) }

// firstRead reports whether a read is to say which revision it reflects:
// a CommitLog is set and the pass has not read yet (only its first read
// is noted, so that the others pay nothing).
func (a *Adapter) firstRead() bool { return a.pass.log.Load() != nil && a.pass.read.Load() == 0 }

// noteRead notes a read that reflected the state at revision rev: the
// pass's first read that says is where it read the state.
func (a *Adapter) noteRead(rev uint64) {
	if rev != 0 {
		a.pass.read.CompareAndSwap(0, rev)
	}
}

// getRevision returns opts asking for the revision a Get reflects in
// *rev, and its note to run once the Get returned (first: a revision the
// caller asks for itself wins, and the read is then not noted).
func (a *Adapter) getRevision(opts []state.GetOption) ([]state.GetOption, func()) {
	rev := new(uint64)
	return append([]state.GetOption{state.WithGetRevision(rev)}, opts...), func() { a.noteRead(*rev) }
}

// listRevision is getRevision for a List.
func (a *Adapter) listRevision(opts []state.ListOption) ([]state.ListOption, func()) {
	rev := new(uint64)
	return append([]state.ListOption{state.WithListRevision(rev)}, opts...), func() { a.noteRead(*rev) }
}

// logCommit tells the CommitLog, when set, that the controller committed
// ptr at version (0: the state did not say; not logged).
func (a *Adapter) logCommit(ptr resource.Pointer, version uint64) {
	l := a.pass.log.Load()
	if l == nil || version == 0 {
		return
	}
	(*l).Committed(a.name, resource.PointerOf(ptr), version, a.pass.read.Load())
}
