package safe

import (
	"context"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// WrappedStateEvent is a [state.Event] whose resources are read as Ts.
type WrappedStateEvent[T resource.Resource] struct {
	ev state.Event
}

// Type returns the event's type.
func (e WrappedStateEvent[T]) Type() state.EventType { return e.ev.Type }

// Resource returns the event's resource as a T: an error wrapping
// [ErrNoResource] when there is none (Bootstrapped, Errored) or when it is
// a tombstone (resource.IsTombstone: the resource did not exist), or
// wrapping [ErrTypeMismatch] when it is of another type.
func (e WrappedStateEvent[T]) Resource() (T, error) {
	return eventResource[T](e.ev, e.ev.Resource, "resource")
}

// Old returns the event's previous resource as a T (set for Updated and
// Destroyed events): an error wrapping [ErrNoResource] when there is none,
// or wrapping [ErrTypeMismatch] when it is of another type.
func (e WrappedStateEvent[T]) Old() (T, error) {
	return eventResource[T](e.ev, e.ev.Old, "old resource")
}

// Error returns the error of an Errored event, nil otherwise.
func (e WrappedStateEvent[T]) Error() error { return e.ev.Error }

// Bookmark returns the event's bookmark.
func (e WrappedStateEvent[T]) Bookmark() state.Bookmark { return e.ev.Bookmark }

// Event returns the underlying event.
func (e WrappedStateEvent[T]) Event() state.Event { return e.ev }

func eventResource[T resource.Resource](ev state.Event, r resource.Resource, what string) (T, error) {
	if r == nil {
		var zero T
		return zero, fmt.Errorf("%s event without %s: %w", ev.Type, what, ErrNoResource)
	}
	if resource.IsTombstone(r) {
		var zero T
		return zero, fmt.Errorf("%s event whose %s is the tombstone of %s (it does not exist): %w", ev.Type, what, resource.PointerString(r.Metadata()), ErrNoResource)
	}
	return cast.To[T](r)
}

// StateWatchKind is [state.CoreState.WatchKind] delivering
// WrappedStateEvent[T]s to ch. It returns once the watch is set up (with
// the watch's error, if any); events are delivered until ctx is done.
//
// The conversion goroutine holds at most one event at a time and exits
// when ctx is done: a consumer that falls behind makes the state coalesce
// (rule S12) rather than this helper buffer. When the state closes its
// stream while ctx is live (a broken backend), one Errored event whose
// error wraps [state.ErrWatchClosed] is delivered and the goroutine exits;
// ch is never closed.
func StateWatchKind[T resource.Resource](ctx context.Context, st state.CoreState, kind resource.Kind, ch chan<- WrappedStateEvent[T], opts ...state.WatchKindOption) error {
	if err := nilArg("StateWatchKind", "state", st); err != nil {
		return err
	}
	if ch == nil {
		return state.NewInvalidError(nil, "watch %s: nil channel", kindString(kind))
	}
	raw := make(chan state.Event)
	if err := st.WatchKind(ctx, kind, raw, opts...); err != nil {
		return err
	}
	name := kindString(kind) // the kind's methods are not called by the goroutine
	go func() {
		for {
			var ev state.Event
			var ok bool
			select {
			case ev, ok = <-raw:
			case <-ctx.Done():
				return
			}
			if !ok {
				ev = state.Event{Type: state.Errored, Error: fmt.Errorf("watch %s: %w", name, state.ErrWatchClosed)}
			}
			select {
			case ch <- WrappedStateEvent[T]{ev: ev}:
			case <-ctx.Done():
				return
			}
			if !ok {
				return
			}
		}
	}()
	return nil
}

func kindString(kind resource.Kind) string {
	if kind == nil {
		return "<nil kind>"
	}
	return resource.KindString(kind)
}
