package etcd_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// TestKindHeadIsTheLastBookmarkOfACaughtUpWatch checks the contract of
// state.KindHeadReporter on etcd: a whole-kind watch that received every
// change holds, on its last event, the bookmark KindHead returns — for
// changes written by this state and by another one on the same cluster
// (another process), deletions included; changes to other kinds do not
// move it.
func TestKindHeadIsTheLastBookmarkOfACaughtUpWatch(t *testing.T) {
	prefix := newPrefix()
	st, err := etcd.New(context.Background(), client, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	other, err := etcd.New(context.Background(), client, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	h, ok := st.(state.KindHeadReporter)
	require.True(t, ok, "the etcd state reports kind heads")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kind := resource.NewKind("ns", conformance.IntResourceType)

	ch := make(chan []state.Event, 64)
	require.NoError(t, st.WatchKindAggregated(ctx, kind, ch, state.WithBootstrapContents(true)))
	var last state.Bookmark
	// drainTo receives batches until the watch's last bookmark is want.
	drainTo := func(want state.Bookmark) {
		t.Helper()
		for string(last) != string(want) {
			select {
			case batch := <-ch:
				last = batch[len(batch)-1].Bookmark
			case <-ctx.Done():
				t.Fatalf("the watch never reached the kind head %x (last %x)", want, last)
			}
		}
	}
	head, err := h.KindHead(ctx, kind)
	require.NoError(t, err)
	drainTo(head)

	// Another kind's changes do not move this kind's head.
	require.NoError(t, st.Create(ctx, conformance.NewStrResource("ns", "s", "x")))
	same, err := h.KindHead(ctx, kind)
	require.NoError(t, err)
	assert.Equal(t, head, same, "a change of another kind does not move the head")

	for i, write := range []func() error{
		func() error { return st.Create(ctx, conformance.NewIntResource("ns", "a", 1)) },
		func() error { return other.Create(ctx, conformance.NewIntResource("ns", "b", 1)) },
		func() error { return other.Destroy(ctx, resource.NewPointer("ns", conformance.IntResourceType, "a")) },
		func() error {
			// A burst from the other state: the head is its last change.
			for j := range 20 {
				if err := other.Create(ctx, conformance.NewIntResource("ns", fmt.Sprintf("c%d", j), j)); err != nil {
					return err
				}
			}
			return nil
		},
	} {
		require.NoError(t, write(), "write %d", i)
		next, err := h.KindHead(ctx, kind)
		require.NoError(t, err)
		assert.NotEqual(t, head, next, "write %d moves the head", i)
		drainTo(next)
		select {
		case batch := <-ch:
			t.Fatalf("write %d: the watch received %d events after the kind head", i, len(batch))
		default:
		}
		head = next
	}

	_, err = h.KindHead(ctx, resource.NewKind("", conformance.IntResourceType))
	assert.True(t, state.IsInvalidError(err))
}

// TestKindHeadWithoutAWatch: with no watch of the kind running, KindHead
// starts one for the call; a watch started afterwards bootstraps with
// that bookmark as long as nothing changed.
func TestKindHeadWithoutAWatch(t *testing.T) {
	st := newState(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kind := resource.NewKind("ns", conformance.IntResourceType)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("ns", "a", 1)))
	head, err := st.(state.KindHeadReporter).KindHead(ctx, kind)
	require.NoError(t, err)
	require.NotEmpty(t, head)

	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	ch := make(chan state.Event, 4)
	require.NoError(t, st.WatchKind(wctx, kind, ch, state.WithBootstrapContents(true)))
	require.Equal(t, state.Created, (<-ch).Type)
	boot := <-ch
	require.Equal(t, state.Bootstrapped, boot.Type)
	again, err := st.(state.KindHeadReporter).KindHead(ctx, kind)
	require.NoError(t, err)
	assert.Equal(t, again, boot.Bookmark, "KindHead is the bootstrap bookmark of a watch with no change since")
}

// TestHeadKeyIsNoResource: the kind's head key, which every write puts,
// is no resource: a List returns exactly the resources written and logs
// no error (a value that does not decode would be logged), a watch's
// bootstrap holds exactly them.
func TestHeadKeyIsNoResource(t *testing.T) {
	logger, logs := observed()
	st := newState(t, etcd.WithLogger(logger))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kind := resource.NewKind("ns", conformance.IntResourceType)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("ns", "a", 1)))
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("ns", "b", 2)))
	require.NoError(t, st.Destroy(ctx, resource.NewPointer("ns", conformance.IntResourceType, "b")))

	list, err := st.List(ctx, kind)
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "a", list.Items[0].Metadata().ID())

	ch := make(chan state.Event, 4)
	require.NoError(t, st.WatchKind(ctx, kind, ch, state.WithBootstrapContents(true)))
	assert.Equal(t, state.Created, (<-ch).Type)
	assert.Equal(t, state.Bootstrapped, (<-ch).Type)
	assert.Zero(t, logs.Len(), "nothing logged: %v", logs.All())
}

// TestSettleIsExactWithAWriterElsewhere: the Runtime's quiescence check
// over the etcd state waits for changes written by another process (here
// another state on another client): right after Settle returns, the
// Runtime's output reflects every one of them.
func TestSettleIsExactWithAWriterElsewhere(t *testing.T) {
	prefix := newPrefix()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := etcd.New(ctx, client, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	otherClient, err := server.Client()
	require.NoError(t, err)
	defer otherClient.Close()
	other, err := etcd.New(ctx, otherClient, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)

	rt, err := runtime.New(st, zap.NewNop())
	require.NoError(t, err)
	stage, err := chainStage("AtoB", false)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(stage))
	stop := runEngine(t, rt)
	defer stop()

	for i := range 20 {
		id := fmt.Sprintf("a%d", i%4)
		require.NoError(t, other.Modify(ctx, newChainA(id, 0), func(r resource.Resource) error {
			r.(*chainA).TypedSpec().N = i
			return nil
		}))
		runtimetest.Settle(t, rt)
		b, err := other.Get(ctx, resource.NewPointer(chainNS, chainKinds[1].Type(), id))
		require.NoError(t, err, "step %d: B %s exists when Settle returns", i, id)
		assert.Equal(t, i+1, chainN(b), "step %d: B %s is up to date when Settle returns", i, id)
	}
}

// runEngine runs rt until the returned function stops it.
func runEngine(t *testing.T, rt *runtime.Runtime) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	return func() {
		cancel()
		assert.NoError(t, <-done)
	}
}
