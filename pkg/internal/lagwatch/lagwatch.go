// Package lagwatch is test support for rule Q4 under a lagging watch: a
// State whose whole-kind watches of one kind can be held back and then
// deliver their backlog coalesced (State), and the scenario that checks
// that a relabel the Runtime never saw still requeues what the input left
// (RelabelBehindRouting), run over every backend by its module's tests.
package lagwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// State is a State whose whole-kind watches of one kind stop delivering
// while held (the watcher lags), and on release deliver what they held as
// a coalesced backlog, as the state contract lets any backend coalesce
// one: one event per resource with its newest state — Created for a
// resource the watcher had not seen, Updated with the version it last saw
// as Old, Destroyed with it as Old, nothing for one it never saw that is
// gone. It counts the Lists of that kind, and reports revisions and kind
// heads as the state it wraps does.
type State struct {
	state.State
	kind  resource.KindKey
	lists atomic.Int64
	// heldRev is the revision of the newest change the watches hold.
	heldRev atomic.Uint64

	mu      sync.Mutex
	held    bool
	release chan struct{} // closed by Release; protected by mu
}

// New wraps st, holding the watches of kind when asked.
func New(st state.State, kind resource.Kind) *State {
	return &State{State: st, kind: resource.KindOf(kind)}
}

// Hold makes the watches of the kind deliver nothing until Release.
func (l *State) Hold() {
	l.mu.Lock()
	l.held, l.release = true, make(chan struct{})
	l.mu.Unlock()
}

// Release delivers what the watches held, coalesced.
func (l *State) Release() {
	l.mu.Lock()
	l.held = false
	close(l.release)
	l.mu.Unlock()
}

// HeldRevision returns the revision of the newest change the watches hold
// (0 when they hold none).
func (l *State) HeldRevision() uint64 { return l.heldRev.Load() }

// Lists returns how many Lists of the kind were made.
func (l *State) Lists() int64 { return l.lists.Load() }

// holding returns the channel Release closes while held, nil otherwise.
func (l *State) holding() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return nil
	}
	return l.release
}

// List counts a List of the kind, then lists.
func (l *State) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if resource.KindOf(kind) == l.kind {
		l.lists.Add(1)
	}
	return l.State.List(ctx, kind, opts...)
}

// Revision implements state.RevisionReporter as the wrapped state does.
func (l *State) Revision(ctx context.Context) (uint64, error) {
	if r, ok := l.State.(state.RevisionReporter); ok {
		return r.Revision(ctx)
	}
	return 0, fmt.Errorf("lagwatch: %T does not number its changes: %w", l.State, errors.ErrUnsupported)
}

// KindRevision implements state.RevisionReporter as the wrapped state does.
func (l *State) KindRevision(ctx context.Context, k resource.Kind) (uint64, uint64, error) {
	if r, ok := l.State.(state.RevisionReporter); ok {
		return r.KindRevision(ctx, k)
	}
	return 0, 0, fmt.Errorf("lagwatch: %T does not number its changes: %w", l.State, errors.ErrUnsupported)
}

// KindHead implements state.KindHeadReporter as the wrapped state does.
func (l *State) KindHead(ctx context.Context, k resource.Kind) (state.Bookmark, error) {
	if h, ok := l.State.(state.KindHeadReporter); ok {
		return h.KindHead(ctx, k)
	}
	return nil, fmt.Errorf("lagwatch: %T reports no kind heads: %w", l.State, errors.ErrUnsupported)
}

// WatchKindAggregated holds the watches of the kind (see State).
func (l *State) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if resource.KindOf(k) != l.kind {
		return l.State.WatchKindAggregated(ctx, k, ch, opts...)
	}
	inner := make(chan []state.Event, 1)
	if err := l.State.WatchKindAggregated(ctx, k, inner, opts...); err != nil {
		return err
	}
	go l.forward(ctx, inner, ch) // owned by the watch: ends with ctx
	return nil
}

// forward passes the batches of inner on to ch, holding them while held.
func (l *State) forward(ctx context.Context, inner <-chan []state.Event, ch chan<- []state.Event) {
	seen := map[resource.ID]resource.Resource{}
	var backlog []state.Event
	for {
		var b []state.Event
		release := l.holding()
		if release == nil && backlog != nil {
			b, backlog = coalesce(seen, backlog), nil
			l.heldRev.Store(0)
		} else {
			select {
			case b = <-inner:
			case <-release:
				continue
			case <-ctx.Done():
				return
			}
			if l.holding() != nil {
				backlog = append(backlog, b...)
				for _, ev := range b {
					l.heldRev.Store(max(l.heldRev.Load(), ev.Revision))
				}
				continue
			}
		}
		see(seen, b)
		select {
		case ch <- b:
		case <-ctx.Done():
			return
		}
	}
}

// see records in seen what the watcher sees of b.
func see(seen map[resource.ID]resource.Resource, b []state.Event) {
	for _, ev := range b {
		switch ev.Type {
		case state.Created, state.Updated:
			seen[ev.Resource.Metadata().ID()] = ev.Resource
		case state.Destroyed:
			delete(seen, ev.Resource.Metadata().ID())
		}
	}
}

// coalesce folds backlog into one event per resource (see State), in the
// order of the changes they end with; seen is what the watcher saw.
// Bootstrapped and Errored events pass as they are.
func coalesce(seen map[resource.ID]resource.Resource, backlog []state.Event) []state.Event {
	last := map[resource.ID]int{}
	for i, ev := range backlog {
		if ev.Resource != nil {
			last[ev.Resource.Metadata().ID()] = i
		}
	}
	var out []state.Event
	for i, ev := range backlog {
		if ev.Resource == nil {
			out = append(out, ev)
			continue
		}
		id := ev.Resource.Metadata().ID()
		if last[id] != i {
			continue
		}
		old, wasSeen := seen[id]
		switch {
		case ev.Type == state.Destroyed && !wasSeen:
			continue
		case ev.Type == state.Destroyed:
			ev.Old = old
		case wasSeen:
			ev.Type, ev.Old = state.Updated, old
		default:
			ev.Type, ev.Old = state.Created, nil
		}
		out = append(out, ev)
	}
	return out
}
