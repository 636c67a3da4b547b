package recording

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// DefaultTakeWait bounds how long a take of a recorder of controllers
// over a state that numbers its changes waits for its lagging kinds'
// changes up to the take's cut (rule RC3) before it fails with a
// [*CatchUpError].
const DefaultTakeWait = 10 * time.Second

// CatchUpError is returned by a take whose window was not handed, within
// its wait, every change of some kinds up to the take's cut (their
// watches lag, or ended): the recording is not made, as it would not be
// complete (rule RC6).
type CatchUpError struct {
	// Cut is the take's revision; Kinds the kinds whose changes up to it
	// did not all come (namespace/type).
	Cut   uint64
	Kinds []string
	// Wait is how long the take waited.
	Wait time.Duration
}

func (e *CatchUpError) Error() string {
	return fmt.Sprintf("recording: the changes up to revision %d of %s did not come within %v: no recording of them is complete",
		e.Cut, strings.Join(e.Kinds, ", "), e.Wait)
}

// leanWin returns the session's lean window (nil: another history);
// r.mu is held.
func (r *Recorder) leanWin() *lean {
	lw, _ := r.win.(*lean)
	return lw
}

// leanView returns the view of a take of the lean window lw, from the
// mark from when given: to a listing at the take's cut, once every kind
// caught up to it (again, when the window's start passed that cut
// meanwhile); after the session ended, to the cut its end took.
// r.mu is held, and held again on return.
func (r *Recorder) leanView(lw *lean, from *mark, session bool) (view, error) {
	var fromCut *cut
	if from != nil {
		fromCut = from.cut
	}
	if r.src == nil {
		if lw.closed == nil {
			return view{}, fmt.Errorf("recording: the recorder's session ended without its final listing: %w", lw.closedErr)
		}
		return lw.viewTo(fromCut, lw.closed), nil
	}
	for range maxTakeListings {
		end, err := r.leanCutLocked(lw, true, session)
		if err != nil {
			return view{}, err
		}
		lw.dropCut(end)
		if lw.prev.c <= end.c {
			return lw.viewTo(fromCut, end), nil
		}
		// The window's start passed the take's cut while it waited (two
		// listings of the session's): the changes between are gone.
	}
	return view{}, errStartPassed
}

// maxTakeListings bounds how many times a take lists the state when the
// window's start keeps passing its cut.
const maxTakeListings = 4

// errStartPassed fails a take whose window's start passed its cut each
// time it listed (the window rolls faster than a take catches up).
var errStartPassed = errors.New("recording: the window's start passed the take's cut each time it listed: the window is too small for its changes")

// leanCutLocked lists every kind without the recorder's lock and returns
// the listing's cut, kept up to date until dropCut; with wait, once
// every kind's changes up to the cut came (within cfg.takeWait; session:
// on the session's goroutine). r.mu is held, and held again on return.
func (r *Recorder) leanCutLocked(lw *lean, wait, session bool) (*cut, error) {
	q, gen, kinds, src := lw.request(), r.gen, r.kinds, r.src
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.takeWait)
	defer cancel()
	start, err := r.list(ctx, kinds)
	var last map[resource.KindKey]uint64
	if err == nil && wait {
		_, last, err = src.doms.kindRevisions(ctx, r.st, kinds)
	}
	r.mu.Lock()
	if gen != r.gen {
		return nil, ErrStartedOver // the window started over: q is gone with it
	}
	if err != nil {
		lw.done()
		return nil, fmt.Errorf("recording: take: %w", err)
	}
	c := lw.addCut(q, newListing(start, time.Now(), 0, src.doms))
	if wait {
		if err := r.catchUpLocked(ctx, lw, c, last, src, session); err != nil {
			lw.dropCut(c)
			return nil, err
		}
	}
	return c, nil
}

// catchUpLocked waits until the window was handed every change up to the
// cut c of each kind, or up to its newest change (last, asked after the
// listing) when that is older, or ctx is done, or the Runtime stopped
// while a kind it tapped is behind (a *CatchUpError). On the
// session's goroutine (session) it reads the recorder's own watches
// meanwhile (no one else does). r.mu is held, and held again on return.
func (r *Recorder) catchUpLocked(ctx context.Context, lw *lean, c *cut, last map[resource.KindKey]uint64, src *source, session bool) error {
	target := map[resource.KindKey]uint64{}
	for k, rev := range last {
		if !lw.logged[k] {
			target[k] = min(rev, c.c) // its changes, the listing's state
		}
	}
	began, gen := time.Now(), r.gen
	var own chan []state.Event
	if session {
		own = src.ch
	}
	r.waiting++
	defer func() { r.waiting-- }()
	for {
		if err := r.drainLocked(); err != nil {
			return fmt.Errorf("recording: %w: it starts its window over", err)
		}
		behind, keys := r.behindLocked(target)
		if len(behind) == 0 {
			return nil
		}
		if src.tap.endedLocked(keys) {
			return &CatchUpError{Cut: c.c, Kinds: behind, Wait: time.Since(began)}
		}
		ch := r.progress
		r.mu.Unlock()
		select {
		case <-ctx.Done():
			r.mu.Lock()
			return &CatchUpError{Cut: c.c, Kinds: behind, Wait: time.Since(began)}
		case <-ch:
		case <-src.tap.stopped:
		case <-src.kick:
		case evs := <-own:
			if err := r.handle(evs, &src.start, src.tap); err != nil {
				r.mu.Lock()
				return err
			}
		}
		r.mu.Lock()
		if gen != r.gen {
			return ErrStartedOver
		}
	}
}

// behindLocked returns the kinds of target whose changes up to their
// revision there the window was not handed yet (named, sorted, and
// their keys); r.mu is held.
func (r *Recorder) behindLocked(target map[resource.KindKey]uint64) ([]string, []resource.KindKey) {
	var behind []string
	var keys []resource.KindKey
	for k, rev := range target {
		if r.seenOf(k) < rev {
			behind = append(behind, resource.KindString(resource.NewKind(k.Namespace(), k.Type())))
			keys = append(keys, k)
		}
	}
	slices.Sort(behind)
	return behind, keys
}

// leanMark returns the mark of a Record that starts now over the lean
// window lw: a listing's cut, asked for at its listing's time (the
// recording starts there unless the window lets go of it). r.mu is
// held, and held again on return.
func (r *Recorder) leanMark(lw *lean) (*mark, error) {
	c, err := r.leanCutLocked(lw, false, false)
	if err != nil {
		return nil, err
	}
	return &mark{cut: c, at: c.l.at, gen: r.gen}, nil
}

// closeLean takes the final cut of a session of a lean window that ends
// (its context done), before its source closes, so that a take after
// Run returned records up to it.
func (r *Recorder) closeLean(src *source) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lw := r.leanWin()
	if lw == nil || r.src != src || !r.ready {
		return
	}
	lw.closed, lw.closedErr = r.leanCutLocked(lw, true, true)
}

// numbered reports whether st numbers all its kinds' changes by one
// sequence: the lean window's condition (rule RC3).
func numbered(ctx context.Context, st state.State, d domains) bool {
	rr, ok := st.(state.RevisionReporter)
	if !ok || d.of != nil {
		return false
	}
	_, err := rr.Revision(ctx)
	return err == nil
}
