package backend

import (
	"context"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The arguments of Watch, WatchKind and WatchKindAggregated are validated
// here, in the same order and with the same invalid-class errors for every
// backend, before a backend does anything: the pointer or kind (rule R3),
// the channel, the options (a negative tail; tail events, a bookmark and
// bootstrap contents are exclusive; a label query with an unusable term,
// rule S15), the context (nil is invalid; a done
// one ends the call with its cause). A bookmark's contents are the
// backend's to decode.

// WatchArgs validates the arguments of a Watch call and returns the
// pointer's key and the options.
func WatchArgs(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts []state.WatchOption) (resource.PointerKey, state.WatchOptions, error) {
	var o state.WatchOptions
	if err := resource.ValidatePointer(ptr); err != nil {
		return resource.PointerKey{}, o, err
	}
	p := resource.PointerOf(ptr)
	if ch == nil {
		return p, o, state.NewInvalidError(p, "watch: nil channel")
	}
	opt.Apply(&o, opts)
	if o.TailEvents < 0 {
		return p, o, state.NewInvalidError(p, "watch: negative tail events %d", o.TailEvents)
	}
	if o.TailEvents > 0 && o.StartFromBookmark != nil {
		return p, o, state.NewInvalidError(p, "watch: tail events and a bookmark are exclusive")
	}
	return p, o, Live(ctx, p, "watch")
}

// KindWatches implements a backend's WatchKind and WatchKindAggregated
// (rules S9–S13) once: each validates its arguments and hands the watch to
// Start. A backend embeds it in its state and sets Start.
type KindWatches struct {
	// Start starts a watch whose arguments are valid: exactly one of ch
	// (WatchKind) and aggCh (WatchKindAggregated) is set.
	Start func(ctx context.Context, kind resource.KindKey, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error
}

// WatchKind implements [state.CoreState.WatchKind] (rules S9–S13).
func (w KindWatches) WatchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	if ch == nil {
		return state.NewInvalidError(nil, "watch %s: nil channel", kindString(kind))
	}
	return w.watch(ctx, kind, ch, nil, opts)
}

// WatchKindAggregated implements [state.CoreState.WatchKindAggregated]:
// WatchKind delivering the events available at once as one batch.
func (w KindWatches) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	if ch == nil {
		return state.NewInvalidError(nil, "watch %s: nil channel", kindString(kind))
	}
	return w.watch(ctx, kind, nil, ch, opts)
}

func (w KindWatches) watch(ctx context.Context, kind resource.Kind, ch chan<- state.Event, aggCh chan<- []state.Event, opts []state.WatchKindOption) error {
	if err := resource.ValidateKind(kind); err != nil {
		return err
	}
	var o state.WatchKindOptions
	opt.Apply(&o, opts)
	k := resource.KindOf(kind)
	if o.TailEvents < 0 {
		return state.NewInvalidError(nil, "watch %s: negative tail events %d", k, o.TailEvents)
	}
	exclusive := 0
	for _, set := range []bool{o.BootstrapContents, o.TailEvents > 0, o.StartFromBookmark != nil} {
		if set {
			exclusive++
		}
	}
	if exclusive > 1 {
		return state.NewInvalidError(nil, "watch %s: bootstrap contents, tail events and a bookmark are exclusive", k)
	}
	if err := o.Validate(k); err != nil {
		return err
	}
	if err := Live(ctx, nil, "watch "+k.String()); err != nil {
		return err
	}
	return w.Start(ctx, k, ch, aggCh, o)
}

// Live returns the invalid-class error of a nil ctx (naming p and what
// the call is), the cause of a done one, or nil: the first check of a
// call that takes a context.
func Live(ctx context.Context, p resource.Pointer, what string) error {
	if ctx == nil {
		return state.NewInvalidError(p, "%s: nil context", what)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// kindString formats a kind that may be invalid for an error message.
func kindString(k resource.Kind) string {
	if resource.ValidateKind(k) != nil {
		return "<invalid kind>"
	}
	return resource.KindString(k)
}
