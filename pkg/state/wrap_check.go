package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// ErrWatchClosed is wrapped by the error of a [WrapCore] helper whose watch
// stream the core closed while the helper was waiting on it (its context
// still live): a watch failure, as an Errored event is.
var ErrWatchClosed = errors.New("watch stream closed by the state")

// The core a WrapCore helper works on may be any implementation, and the
// resources it returns any type: their methods are user code. The helpers
// check what the core hands them before using it, and turn a broken answer
// into an error instead of a panic or a busy loop:
//
//   - a Get that returns no resource (or a typed nil) without an error, or
//     a resource whose Metadata panics, returns nil or names another
//     resource, is an error of the call;
//   - on a watch, a closed stream (ErrWatchClosed), an Errored event, or a
//     change event with such a resource, is a watch failure (watchError).

// readOnlyGet are the options of coreGet, made once: shared by every call
// and never changed (a variadic call's slice is an allocation).
var readOnlyGet = []GetOption{WithReadOnlyGet()}

// readOnlyGetter is a core with a read-only Get that takes no option
// functions (the inmem state): applying them is an allocation.
type readOnlyGetter interface {
	GetReadOnly(ctx context.Context, ptr resource.Pointer) (resource.Resource, error)
}

// coreGet is the core's read-only Get of ptr (the shared snapshot, rule
// S7), checked: the resource returned and its metadata, or an error.
func (w *coreWrapper) coreGet(ctx context.Context, ptr resource.Pointer) (r resource.Resource, md *resource.Metadata, err error) {
	if g, ok := w.CoreState.(readOnlyGetter); ok {
		r, err = g.GetReadOnly(ctx, ptr)
	} else {
		r, err = w.Get(ctx, ptr, readOnlyGet...)
	}
	if err != nil {
		return nil, nil, err
	}
	md, err = checkedMetadata(ptr, r)
	if err != nil {
		return nil, nil, fmt.Errorf("resource %s: the state's Get returned %w", resource.PointerString(ptr), err)
	}
	return r, md, nil
}

// badResource is the error of a resource from the core that cannot be used.
type badResource struct{ msg string }

func (e badResource) Error() string { return e.msg }

// checkedMetadata returns r's metadata when r is a resource ptr names;
// otherwise an error that says what is wrong with it ("no resource", ...).
func checkedMetadata(ptr resource.Pointer, r resource.Resource) (md *resource.Metadata, err error) {
	if usercode.IsNil(r) {
		return nil, badResource{msg: fmt.Sprintf("no resource (%T)", r)}
	}
	if p := usercode.Call(func() { md = r.Metadata() }); p != nil {
		return nil, badResource{msg: fmt.Sprintf("a %T whose Metadata panicked: %s", r, usercode.Sprint(p.Value))}
	}
	if md == nil {
		return nil, badResource{msg: fmt.Sprintf("a %T without metadata", r)}
	}
	if !sameIdentity(md, ptr) {
		return nil, badResource{msg: "the resource " + resource.PointerString(md)}
	}
	return md, nil
}

// watchError is the failure of a watch a helper waits on: the stream
// closed, an Errored event, or an unusable change event. Its text is
// rendered when it is made (the Errored event's error is user code: its
// Error method runs once, inside a recovery); it wraps the event's error,
// so that the error classes (IsBufferOverrunError...) see through it.
type watchError struct {
	err  error
	text string
}

func (e *watchError) Error() string { return e.text }
func (e *watchError) Unwrap() error { return e.err }

// nextEvent waits for the next event on ch, the single-resource watch of
// ptr, that is a change (Created, Updated or Destroyed), and returns it
// with its resource's metadata. It returns ctx's cause when ctx is done,
// and a *watchError when the watch fails (see the comment above
// coreGet). Other event types (Bootstrapped, Noop) are skipped.
func nextEvent(ctx context.Context, ptr resource.Pointer, ch <-chan Event) (Event, *resource.Metadata, error) {
	for {
		var ev Event
		var ok bool
		select {
		case <-ctx.Done():
			return Event{}, nil, context.Cause(ctx)
		case ev, ok = <-ch:
		}
		if !ok {
			if ctx.Err() != nil {
				return Event{}, nil, context.Cause(ctx)
			}
			return Event{}, nil, &watchError{err: ErrWatchClosed, text: "resource " + resource.PointerString(ptr) + ": watch failed: " + ErrWatchClosed.Error()}
		}
		switch ev.Type {
		case Created, Updated, Destroyed:
		case Errored:
			text := "errored event without an error"
			if ev.Error != nil {
				text = usercode.ErrorText(ev.Error)
			}
			return Event{}, nil, &watchError{err: ev.Error, text: "resource " + resource.PointerString(ptr) + ": watch failed: " + text}
		default:
			continue
		}
		md, err := checkedMetadata(ptr, ev.Resource)
		if err != nil {
			return Event{}, nil, &watchError{err: err, text: fmt.Sprintf("resource %s: watch failed: the state sent an event of type %s with %s", resource.PointerString(ptr), ev.Type, err)}
		}
		return ev, md, nil
	}
}
