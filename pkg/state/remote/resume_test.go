package remote_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/internal/netcut"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

const resumeNS = "resume"

// quickDial returns a connection to addr that reconnects quickly after a
// break (the tests cut connections on purpose).
func quickDial(tb testing.TB, addr string) *grpc.ClientConn {
	tb.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = conn.Close() })
	return conn
}

func quickClient(tb testing.TB, addr string) state.State {
	tb.Helper()
	st, err := remote.NewClient(quickDial(tb, addr), registry(), remote.WithReconnectBackoff(10*time.Millisecond, 100*time.Millisecond))
	require.NoError(tb, err)
	return st
}

// eventLog collects a watch's events.
type eventLog struct {
	mu     sync.Mutex
	events []state.Event
}

func (l *eventLog) add(ev state.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
}

func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

func (l *eventLog) snapshot() []state.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]state.Event(nil), l.events...)
}

// collect reads ch into a log until ctx is done.
func collect(ctx context.Context, wg *sync.WaitGroup, ch <-chan state.Event) *eventLog {
	l := &eventLog{}
	wg.Go(func() {
		for {
			select {
			case ev := <-ch:
				l.add(ev)
			case <-ctx.Done():
				return
			}
		}
	})
	return l
}

// waitFor waits until cond holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, 30*time.Second, 2*time.Millisecond, what)
}

// TestN2_WatchSurvivesACutConnection: a kind watch through a proxy that
// cuts and holds the connection while a writer changes the kind: the
// watcher receives every change exactly once, in the order of the
// changes, and ends at the state's final contents.
func TestN2_WatchSurvivesACutConnection(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st)
	px := netcut.New(t, d.lis.Addr().String())
	cl := quickClient(t, px.Addr())
	kind := resource.NewKind(resumeNS, conformance.IntResourceType)

	const resources, rounds = 8, 75 // 608 changes
	ch := make(chan state.Event, 16)
	require.NoError(t, cl.WatchKind(ctx, kind, ch))
	var wg sync.WaitGroup
	defer wg.Wait()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	log := collect(wctx, &wg, ch)

	var written atomic.Int64
	require.NoError(t, createAll(ctx, st, resources, &written))
	require.NoError(t, writeRounds(ctx, st, resources, 1, 25, &written))
	waitFor(t, "the watcher receives changes before the cut", func() bool { return log.len() >= 100 })

	// Cut under writes, and write while the connection is held.
	writerDone := make(chan error, 1)
	go func() { writerDone <- writeRounds(ctx, st, resources, 26, 50, &written) }()
	px.Cut()
	require.NoError(t, <-writerDone)
	// Restore under writes.
	go func() { writerDone <- writeRounds(ctx, st, resources, 51, rounds, &written) }()
	px.Restore()
	require.NoError(t, <-writerDone)
	total := int(written.Load())
	waitFor(t, "the watcher receives every change", func() bool { return log.len() >= total })

	evs := log.snapshot()
	assert.Len(t, evs, total, "every change exactly once")
	checkChain(t, evs)
	final, err := st.List(ctx, kind)
	require.NoError(t, err)
	last := map[resource.ID]uint64{}
	for _, ev := range evs {
		if ev.Type == state.Destroyed {
			delete(last, ev.Resource.Metadata().ID())
		} else {
			last[ev.Resource.Metadata().ID()] = ev.Resource.Metadata().Version().Value()
		}
	}
	require.Len(t, last, len(final.Items))
	for _, r := range final.Items {
		assert.Equal(t, r.Metadata().Version().Value(), last[r.Metadata().ID()], r.Metadata().ID())
	}
	assert.GreaterOrEqual(t, px.Accepted.Load(), int64(2), "the client connected again after the cut")
}

func rid(i int) string { return fmt.Sprintf("r%02d", i) }

// createAll creates n resources, counting them in written.
func createAll(ctx context.Context, st state.State, n int, written *atomic.Int64) error {
	for i := range n {
		if err := st.Create(ctx, conformance.NewIntResource(resumeNS, rid(i), 0)); err != nil {
			return err
		}
		written.Add(1)
	}
	return nil
}

// writeRounds updates each of n resources once per round from first to
// last, and destroys and creates the first one again every 10 rounds,
// counting every change in written.
func writeRounds(ctx context.Context, st state.State, n, first, last int, written *atomic.Int64) error {
	for round := first; round <= last; round++ {
		for i := range n {
			_, err := st.ModifyWithResult(ctx, conformance.NewIntResource(resumeNS, rid(i), 0), func(r resource.Resource) error {
				r.(*conformance.IntResource).TypedSpec().Value = round
				return nil
			})
			if err != nil {
				return err
			}
			written.Add(1)
		}
		if round%10 == 0 {
			if err := st.Destroy(ctx, resource.NewPointer(resumeNS, conformance.IntResourceType, rid(0))); err != nil {
				return err
			}
			if err := st.Create(ctx, conformance.NewIntResource(resumeNS, rid(0), round)); err != nil {
				return err
			}
			written.Add(2)
		}
	}
	return nil
}

// checkChain checks that the events of each resource are its changes in
// order: versions one apart, Created first in each life, Destroyed last,
// and that bookmarks strictly increase.
func checkChain(t *testing.T, evs []state.Event) {
	t.Helper()
	next := map[resource.ID]uint64{} // the version expected next; 0: absent
	var prev state.Bookmark
	for i, ev := range evs {
		require.NotEqual(t, state.Errored, ev.Type, "event %d: %v", i, ev.Error)
		md := ev.Resource.Metadata()
		v := md.Version().Value()
		switch ev.Type {
		case state.Created:
			require.Zerof(t, next[md.ID()], "event %d: Created %s while it exists", i, md.ID())
			next[md.ID()] = v + 1
		case state.Updated:
			require.Equalf(t, next[md.ID()], v, "event %d: Updated %s to version %d", i, md.ID(), v)
			require.Equal(t, v-1, ev.Old.Metadata().Version().Value())
			next[md.ID()] = v + 1
		case state.Destroyed:
			require.Equalf(t, next[md.ID()], v+1, "event %d: Destroyed %s at version %d", i, md.ID(), v)
			delete(next, md.ID())
		}
		require.NotEmpty(t, ev.Bookmark, "event %d", i)
		require.Truef(t, string(ev.Bookmark) > string(prev), "event %d: bookmarks increase", i)
		prev = ev.Bookmark
	}
}

// TestN2_RestartedDaemonEndsWatchWithBookmarkUnknown: the daemon behind
// a watch restarts (a new state behind a new server on the same address):
// the watch ends with an Errored event of the bookmark-unknown class,
// and re-lists nothing.
func TestN2_RestartedDaemonEndsWatchWithBookmarkUnknown(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			ctx := testCtx(t)
			lis := listen(t, network)
			addr := lis.Addr().String()
			first := serve(t, lis, inmem.NewState())
			cl := quickClient(t, first.Addr)
			require.NoError(t, first.State.Create(ctx, conformance.NewIntResource(resumeNS, "a", 1)))

			ch := make(chan state.Event, 16)
			require.NoError(t, cl.Watch(ctx, resource.NewPointer(resumeNS, conformance.IntResourceType, "a"), ch))
			ev := <-ch
			require.Equal(t, state.Created, ev.Type)
			require.NotEmpty(t, ev.Bookmark)

			first.stop()
			relis, err := net.Listen(network, addr)
			require.NoError(t, err)
			second := serve(t, relis, inmem.NewState())
			require.NoError(t, second.State.Create(ctx, conformance.NewIntResource(resumeNS, "a", 2)))

			select {
			case ev = <-ch:
			case <-time.After(30 * time.Second):
				t.Fatal("the watch did not end after the daemon restarted")
			}
			require.Equal(t, state.Errored, ev.Type, "no re-list: the next event is the error")
			assert.True(t, remote.IsBookmarkUnknownError(ev.Error), "%v", ev.Error)
			assert.True(t, state.IsBufferOverrunError(ev.Error), "%v", ev.Error)
			assert.Contains(t, ev.Error.Error(), "bookmark")
		})
	}
}

// TestN2_HistoryMovedOnEndsWatchWithBookmarkUnknown: while a watch's
// connection is held, more changes than the state keeps happen: the
// watch cannot resume and ends with the bookmark-unknown error.
func TestN2_HistoryMovedOnEndsWatchWithBookmarkUnknown(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState(inmem.WithHistoryCapacity(16))
	d := serve(t, listen(t, "tcp"), st)
	px := netcut.New(t, d.lis.Addr().String())
	cl := quickClient(t, px.Addr())
	require.NoError(t, st.Create(ctx, conformance.NewIntResource(resumeNS, "a", 0)))
	ch := make(chan state.Event, 16)
	require.NoError(t, cl.WatchKind(ctx, resource.NewKind(resumeNS, conformance.IntResourceType), ch, state.WithBootstrapContents(true)))
	require.Equal(t, state.Created, (<-ch).Type)
	require.Equal(t, state.Bootstrapped, (<-ch).Type)

	px.Cut()
	var written atomic.Int64
	require.NoError(t, writeRounds(ctx, st, 1, 1, 100, &written))
	px.Restore()
	ev := <-ch
	require.Equal(t, state.Errored, ev.Type)
	assert.True(t, remote.IsBookmarkUnknownError(ev.Error), "%v", ev.Error)
}
