package backend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// TestWatchArgs: every bad argument of Watch is an invalid-class error
// (a done context: its cause); good ones give the pointer's key and the
// options.
func TestWatchArgs(t *testing.T) {
	ctx := context.Background()
	ptr := resource.NewPointer("ns", "T", "id")
	ch := make(chan state.Event)
	for name, tc := range map[string]struct {
		ctx  context.Context
		ptr  resource.Pointer
		ch   chan state.Event
		opts []state.WatchOption
	}{
		"nil pointer":       {ctx: ctx, ch: ch},
		"empty ID":          {ctx: ctx, ptr: resource.NewPointer("ns", "T", ""), ch: ch},
		"nil channel":       {ctx: ctx, ptr: ptr},
		"negative tail":     {ctx: ctx, ptr: ptr, ch: ch, opts: []state.WatchOption{state.WithTailEvents(-1)}},
		"tail and bookmark": {ctx: ctx, ptr: ptr, ch: ch, opts: []state.WatchOption{state.WithTailEvents(1), state.WithStartFromBookmark(state.Bookmark{1})}},
		"nil context":       {ptr: ptr, ch: ch},
	} {
		_, _, err := backend.WatchArgs(tc.ctx, tc.ptr, tc.ch, tc.opts)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
	}

	cause := errors.New("gone")
	done, cancel := context.WithCancelCause(ctx)
	cancel(cause)
	_, _, err := backend.WatchArgs(done, ptr, ch, nil)
	assert.ErrorIs(t, err, cause, "a done context ends the call with its cause")

	md := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	p, o, err := backend.WatchArgs(ctx, &md, ch, []state.WatchOption{nil, state.WithTailEvents(3)})
	require.NoError(t, err)
	assert.Equal(t, resource.PointerOf(ptr), p)
	assert.Equal(t, 3, o.TailEvents, "options applied, nil ones skipped")
}

// TestKindWatches: WatchKind and WatchKindAggregated refuse every bad
// argument with an invalid-class error before Start, and hand a valid
// watch to Start with the kind's key, the options and the one channel
// they were given.
func TestKindWatches(t *testing.T) {
	ctx := context.Background()
	type call struct {
		kind resource.KindKey
		ev   bool
		agg  bool
		o    state.WatchKindOptions
	}
	var calls []call
	w := backend.KindWatches{Start: func(_ context.Context, k resource.KindKey, ch chan<- state.Event, aggCh chan<- []state.Event, o state.WatchKindOptions) error {
		calls = append(calls, call{kind: k, ev: ch != nil, agg: aggCh != nil, o: o})
		return nil
	}}
	kind := resource.NewKind("ns", "T")
	ch, aggCh := make(chan state.Event), make(chan []state.Event)
	bad := map[string]struct {
		ctx  context.Context
		kind resource.Kind
		nilC bool
		opts []state.WatchKindOption
	}{
		"nil kind":               {ctx: ctx},
		"empty type":             {ctx: ctx, kind: resource.NewKind("ns", "")},
		"nil channel":            {ctx: ctx, kind: kind, nilC: true},
		"negative tail":          {ctx: ctx, kind: kind, opts: []state.WatchKindOption{state.WithKindTailEvents(-1)}},
		"tail and bootstrap":     {ctx: ctx, kind: kind, opts: []state.WatchKindOption{state.WithKindTailEvents(1), state.WithBootstrapContents(true)}},
		"bookmark and bootstrap": {ctx: ctx, kind: kind, opts: []state.WatchKindOption{state.WithKindStartFromBookmark(state.Bookmark{1}), state.WithBootstrapContents(true)}},
		"nil context":            {kind: kind},
	}
	for name, tc := range bad {
		c, a := ch, aggCh
		if tc.nilC {
			c, a = nil, nil
		}
		assert.True(t, state.IsInvalidError(w.WatchKind(tc.ctx, tc.kind, c, tc.opts...)), "WatchKind: %s", name)
		assert.True(t, state.IsInvalidError(w.WatchKindAggregated(tc.ctx, tc.kind, a, tc.opts...)), "WatchKindAggregated: %s", name)
	}
	require.Empty(t, calls, "no bad watch reaches Start")

	md := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	require.NoError(t, w.WatchKind(ctx, &md, ch, state.WithBootstrapContents(true)))
	require.NoError(t, w.WatchKindAggregated(ctx, kind, aggCh, nil, state.WithKindTailEvents(2)))
	key := resource.KindOf(kind)
	assert.Equal(t, []call{
		{kind: key, ev: true, o: state.WatchKindOptions{BootstrapContents: true}},
		{kind: key, agg: true, o: state.WatchKindOptions{TailEvents: 2}},
	}, calls)
}
