package route

import (
	"context"
	"errors"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// On-demand re-lists (Router.Relist): the caller asks a kind's watch to
// re-list, and waits until a list made after its request has been routed.
//
// Requests are numbered (relists.asked). A watch records, when it opens,
// the highest request it answers (served): its bootstrap is a list made
// after those requests. Once that bootstrap is routed (the first one, or a
// re-list's diff) the requests up to served are done. A request that
// comes after a watch opened restarts the watch (errRelist): the running
// watch's list is older than the request. A watch that fails before its
// bootstrap is routed leaves its requests to the next watch.

// errRelist ends a watch to re-list it on request; it is no failure.
var errRelist = errors.New("re-list requested")

// ErrNotWatched is returned by Router.Relist for a kind no watch runs for.
var ErrNotWatched = errors.New("the kind is not watched")

// ErrStopped is returned by Router.Relist when the kind's watch stopped
// (the Runtime stops) before the re-list was routed.
var ErrStopped = errors.New("the Runtime stopped")

// relists are a kind watch's pending re-list requests.
type relists struct {
	// kick wakes the watch goroutine; capacity one.
	kick chan struct{}
	// stopped is closed when the watch goroutine exits.
	stopped chan struct{}

	mu sync.Mutex
	// asked is the number of the newest request; protected by mu.
	asked uint64
	// waiting are the requests not done yet; protected by mu.
	waiting []relistWaiter

	// served is the newest request the running watch's bootstrap answers.
	// Owned by the watch goroutine.
	served uint64
}

// relistWaiter is one request: done is closed once it is done.
type relistWaiter struct {
	n    uint64
	done chan struct{}
}

func newRelists() relists {
	return relists{kick: make(chan struct{}, 1), stopped: make(chan struct{})}
}

// ask records a request and wakes the watch; it returns the channel closed
// once the request is done.
func (rl *relists) ask() <-chan struct{} {
	rl.mu.Lock()
	rl.asked++
	done := make(chan struct{})
	rl.waiting = append(rl.waiting, relistWaiter{n: rl.asked, done: done})
	rl.mu.Unlock()
	select {
	case rl.kick <- struct{}{}:
	default:
	}
	return done
}

// opening is called by the watch goroutine as it opens a watch: the
// bootstrap it gets answers every request made so far.
func (rl *relists) opening() {
	rl.mu.Lock()
	rl.served = rl.asked
	rl.mu.Unlock()
}

// newer reports whether a request came after the running watch opened
// (called by the watch goroutine when kicked).
func (rl *relists) newer() bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.asked > rl.served
}

// routed is called by the watch goroutine once the bootstrap of the
// running watch has been routed: the requests it answers are done.
func (rl *relists) routed() {
	rl.mu.Lock()
	kept := rl.waiting[:0]
	for _, wt := range rl.waiting {
		if wt.n <= rl.served {
			close(wt.done)
			continue
		}
		kept = append(kept, wt)
	}
	clear(rl.waiting[len(kept):])
	rl.waiting = kept
	rl.mu.Unlock()
}

// Relist makes the watch of kind k list the kind again and route what
// differs from what it routed before — the resources that changed, as
// changes, and those that disappeared, as destroyed; nothing for an
// unchanged one — as after a watch failure, and returns once that is
// routed: every affected controller has then been woken, or its items
// queued. For a resumable kind (resume.go) it waits instead until the
// running watch has routed every change committed before the call. It
// returns ErrNotWatched when no watch runs for k, ErrStopped
// when the watch stops first, and ctx's error when ctx is done first.
func (r *Router) Relist(ctx context.Context, k resource.KindKey) error {
	r.mu.Lock()
	w := r.kinds[k]
	started := w != nil && w.started
	r.mu.Unlock()
	if !started {
		return ErrNotWatched
	}
	if w.resumable {
		return w.relistResumable(ctx)
	}
	done := w.relists.ask()
	select {
	case <-done:
		return nil
	case <-w.relists.stopped:
		// The watch may have routed it just before it stopped.
		select {
		case <-done:
			return nil
		default:
			return ErrStopped
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}
