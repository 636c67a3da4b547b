package route

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Resumable kinds: over a state whose kind watches resume from a bookmark
// (state.KindWatchResumer), a kind the Runtime does not cache keeps no
// [Memory] of what its watch routed (noMemory). Its watch records the
// bookmark of the last event it routed once live (resumeAt); a watch that
// fails is opened again from that bookmark, without bootstrap contents,
// and is live at once: the state delivers exactly the changes after it,
// each destroyed resource with its last version (rule Q4). When the state
// refuses the bookmark (a buffer-overrun error, from the call or from the
// resumed stream), the next watch lists the kind, and its bootstrap is
// routed in full against the empty memory: every listed resource as a
// change, none as destroyed (a warning says so). An on-demand re-list of
// such a kind reopens nothing: it waits until the running watch has routed
// every change committed before the call (barriers).

// noMemory is the [Memory] of a resumable kind: it remembers nothing.
type noMemory struct{}

func (noMemory) ApplyBatch([]state.Event, []*resource.Metadata, uint64, bool) {}
func (noMemory) Unchanged(resource.ID, *resource.Metadata) bool               { return false }
func (noMemory) Last(resource.ID) (resource.Resource, bool)                   { return nil, false }
func (noMemory) AppendRemembered(dst []Remembered) []Remembered               { return dst }
func (noMemory) MarkReady()                                                   {}

// resumes reports whether st resumes the watches of kind k (see
// state.ResumesKindWatches); the call is the state's code: a panic is a
// no.
func resumes(st state.State, k resource.KindKey) (ok bool) {
	if p := usercode.Call(func() { ok = state.ResumesKindWatches(st, k) }); p != nil {
		return false
	}
	return ok
}

// resumeFrom returns the bookmark the next watch resumes from: nil when it
// lists the kind (not resumable, before the first bootstrap, or after a
// refused resume).
func (w *kindWatcher) resumeFrom() state.Bookmark {
	if !w.resumable || !w.bootstrappedOnce || w.mustList {
		return nil
	}
	return w.resumeAt
}

// refused handles the failure err of a watch: when the watch was opened
// from a bookmark and routed nothing, a buffer-overrun error (from the call
// or its first batch) means the state no longer keeps the changes after
// the bookmark, and the next watch lists the kind.
func (w *kindWatcher) refused(err error) {
	if !w.resuming {
		return
	}
	w.resuming = false
	var overrun bool
	if f, ok := err.(watchFailure); ok {
		overrun = f.overrun
	}
	if !overrun {
		return
	}
	w.mustList = true
	w.logger.Warn("the state cannot resume the kind's watch from its bookmark; listing the kind again: every resource is routed as a change, and a resource destroyed while the watch was down is not routed as destroyed",
		zap.String("error", failureText(err)))
}

// isOverrun reports whether err is a buffer-overrun error; err is the
// state's: a panic of its methods is a no.
func isOverrun(err error) (ok bool) {
	if p := usercode.Call(func() { ok = state.IsBufferOverrunError(err) }); p != nil {
		return false
	}
	return ok
}

// barriers are the waiters for a kind's watch to route a revision: the
// on-demand re-lists of a resumable kind, and the reads of a mapped input
// that went ahead of routing (RoutedKind.Await).
type barriers struct {
	// routed is the revision of the state the watch has routed the kind
	// up to (written by the watch goroutine).
	routed atomic.Uint64
	// pending is len(waiting), read without mu by the watch goroutine.
	pending atomic.Int64

	mu      sync.Mutex
	waiting []barrier // protected by mu
}

// barrier is one re-list: done is closed once revision rev is routed.
type barrier struct {
	rev  uint64
	done chan struct{}
}

// await returns a channel closed once the watch has routed revision rev.
func (b *barriers) await(rev uint64) <-chan struct{} {
	done := make(chan struct{})
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting = append(b.waiting, barrier{rev: rev, done: done})
	b.pending.Store(int64(len(b.waiting)))
	b.release()
	return done
}

// reached records that the watch has routed revision rev (called by the
// watch goroutine after a routed batch, once live).
func (b *barriers) reached(rev uint64) {
	b.routed.Store(rev)
	if b.pending.Load() == 0 {
		return
	}
	b.mu.Lock()
	b.release()
	b.mu.Unlock()
}

// release closes the barriers the watch has routed; the caller holds mu.
func (b *barriers) release() {
	rev := b.routed.Load()
	kept := b.waiting[:0]
	for _, br := range b.waiting {
		if br.rev <= rev {
			close(br.done)
			continue
		}
		kept = append(kept, br)
	}
	clear(b.waiting[len(kept):])
	b.waiting = kept
	b.pending.Store(int64(len(kept)))
}

// forget drops the barrier whose channel is done (its waiter gave up),
// so that waiters who give up leave nothing behind.
func (b *barriers) forget(done <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, br := range b.waiting {
		if br.done == done {
			b.waiting = slices.Delete(b.waiting, i, i+1)
			break
		}
	}
	b.pending.Store(int64(len(b.waiting)))
}

// relistResumable is Router.Relist for a resumable kind: it reads the
// revision of the kind's newest change and waits until the watch has
// routed it (every change committed before the call), then makes the next
// pass of the kind's Controllers a full one and counts a re-list.
func (w *kindWatcher) relistResumable(ctx context.Context) error {
	rr, _ := w.st.(state.RevisionReporter)
	var (
		last uint64
		err  error
	)
	if p := usercode.Call(func() { last, _, err = rr.KindRevision(ctx, w.key) }); p != nil {
		err = fmt.Errorf("the state's KindRevision panicked: %s", usercode.Sprint(p.Value))
	}
	if err != nil {
		return fmt.Errorf("re-list %s: the revision of the kind: %w", w.key, err)
	}
	done := w.barriers.await(last)
	select {
	case w.relists.kick <- struct{}{}: // a watch waiting out a backoff reopens now
	default:
	}
	select {
	case <-done:
	case <-w.relists.stopped:
		select {
		case <-done:
		default:
			return ErrStopped
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	w.relistedFull()
	w.tel.Relisted()
	return nil
}
