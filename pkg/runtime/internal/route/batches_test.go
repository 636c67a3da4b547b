package route

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/batchpool"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/internal/idle"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// poolSeen is an in-memory state that reports the pool each
// WatchKindAggregated call binds to its channel.
type poolSeen struct {
	state.State
	pools chan *batchpool.Pool
}

func (s poolSeen) WatchKindAggregated(ctx context.Context, k resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	s.pools <- batchpool.For(ctx, ch)
	return s.State.WatchKindAggregated(ctx, k, ch, opts...)
}

// TestKindWatch_HandsRoutedBatchesBack: a kind watch binds a pool to its
// channel and hands every batch it routed back to it, where the state
// takes the memory of its next batch from.
func TestKindWatch_HandsRoutedBatchesBack(t *testing.T) {
	ctx, st, kind, pool := runPooledWatch(t)
	require.NotNil(t, pool, "the watch binds a pool to its channel")
	waitHandedBack(ctx, t, pool) // the bootstrap's
	for i := range 3 {
		md := resource.NewMetadata("test", kind.Type(), fmt.Sprint(i), resource.VersionUndefined)
		require.NoError(t, st.Create(ctx, typed.New[benchSpec, benchDef](md, benchSpec{A: i})))
	}
	waitHandedBack(ctx, t, pool) // the creates', once routed
}

// runPooledWatch runs a kind watch over an in-memory state (its goroutine
// ends with the test) and returns the context it runs under, the state,
// the kind, and the pool the watch bound to its channel.
func runPooledWatch(t *testing.T) (context.Context, poolSeen, resource.Kind, *batchpool.Pool) {
	st := poolSeen{State: inmem.NewState(), pools: make(chan *batchpool.Pool, 1)}
	kind := resource.KindOf(resource.NewKind("test", "As.test.resgraph.dev"))
	r := New(Config{State: st, Metrics: true, Subscriptions: func(resource.KindKey) []Subscription { return nil }, Idle: &idle.Notifier{}, Logger: zap.NewNop(), Go: func(func()) bool { return false }})
	r.mu.Lock()
	w := r.watcherLocked(kind)
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { w.run(ctx); close(done) }() // owned: ends with cancel, waited at the test's end
	t.Cleanup(func() { cancel(); <-done })
	return ctx, st, kind, <-st.pools
}

// waitHandedBack waits until pool holds a batch handed back, and takes it.
func waitHandedBack(ctx context.Context, t *testing.T, pool *batchpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // a failure bound, not a threshold
	defer cancel()
	for {
		if b := pool.Get(); b != nil {
			require.Empty(t, b)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("no batch handed back")
		default:
			runtime.Gosched()
		}
	}
}

// TestKindWatch_KeepsEveryBatchItsChannelHolds: the pool a kind watch
// binds keeps as many batches as its channel holds, plus the one being
// routed and the one the state builds, so that a state that ran a full
// channel ahead of the router reuses every batch once they are routed.
func TestKindWatch_KeepsEveryBatchItsChannelHolds(t *testing.T) {
	ctx, _, _, pool := runPooledWatch(t)
	waitHandedBack(ctx, t, pool) // the bootstrap's: the pool is empty again
	for range watchBuffer + 2 {
		pool.Put(make([]state.Event, 1))
	}
	kept := 0
	for pool.Get() != nil {
		kept++
	}
	require.Equal(t, watchBuffer+2, kept, "the channel's batches, the one routed, the one built")
}
