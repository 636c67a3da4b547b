package remote_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

const limitNS = "limits"

func limitKind() resource.Kind { return resource.NewKind(limitNS, conformance.IntResourceType) }

// TestN3_WatchesPerConnectionAreBounded: one connection may have its
// bound of watches open; one more is ResourceExhausted; another
// connection is not affected; ending a watch frees its place.
func TestN3_WatchesPerConnectionAreBounded(t *testing.T) {
	ctx := testCtx(t)
	d := serve(t, listen(t, "tcp"), inmem.NewState(), remote.WithMaxWatchesPerConnection(4))
	cl := client(t, d.Addr)
	cancels := make([]context.CancelFunc, 0, 4)
	for range 4 {
		wctx, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		require.NoError(t, cl.WatchKind(wctx, limitKind(), make(chan state.Event, 1)))
	}
	err := cl.WatchKind(ctx, limitKind(), make(chan state.Event, 1))
	require.Error(t, err)
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "4 watches open")

	other := client(t, d.Addr)
	require.NoError(t, other.WatchKind(ctx, limitKind(), make(chan state.Event, 1)), "another connection has its own bound")

	cancels[0]()
	waitFor(t, "an ended watch frees its place", func() bool {
		return cl.WatchKind(ctx, limitKind(), make(chan state.Event, 1)) == nil
	})
	for _, c := range cancels[1:] {
		c()
	}
}

// TestN3_TenThousandWatchesFromOneClient: a client that opens 10k watches
// gets the server's bound of them and ResourceExhausted for the rest;
// other clients are served meanwhile; when it leaves, nothing of its
// watches is left.
func TestN3_TenThousandWatchesFromOneClient(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st)
	other := client(t, d.Addr)
	require.NoError(t, other.Create(ctx, conformance.NewIntResource(limitNS, "a", 1)))
	ignore := goleak.IgnoreCurrent()

	hog := dial(t, d.Addr)
	cl, err := remote.NewClient(hog, registry())
	require.NoError(t, err)
	wctx, cancel := context.WithCancel(ctx)
	opened, refused := 0, 0
	for range 10_000 {
		err := cl.WatchKind(wctx, limitKind(), make(chan state.Event, 1))
		switch status.Code(err) {
		case codes.OK:
			opened++
		case codes.ResourceExhausted:
			refused++
		default:
			t.Fatalf("watch: %v", err)
		}
	}
	assert.Equal(t, remote.DefaultMaxWatchesPerConnection, opened)
	assert.Equal(t, 10_000-opened, refused)

	_, err = other.Get(ctx, resource.NewPointer(limitNS, conformance.IntResourceType, "a"))
	require.NoError(t, err, "other clients are served")
	octx, ocancel := context.WithCancel(ctx)
	ch := make(chan state.Event, 1)
	require.NoError(t, other.WatchKind(octx, limitKind(), ch))
	require.NoError(t, st.Create(ctx, conformance.NewIntResource(limitNS, "b", 1)))
	assert.Equal(t, "b", (<-ch).Resource.Metadata().ID(), "other clients' watches are served")
	ocancel()

	cancel()
	require.NoError(t, hog.Close())
	goleak.VerifyNone(t, ignore, goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"))
}

// TestN3_ClientThatNeverReadsStallsNothing: a client that opens a watch,
// takes what it granted and then reads nothing more while a writer makes
// thousands of changes: the writer and another watcher go on, and when
// the client reads again it gets the changes coalesced (S12 over the
// wire), ending at the final state.
func TestN3_ClientThatNeverReadsStallsNothing(t *testing.T) {
	ctx := testCtx(t)
	const history, resources, rounds = 16, 10, 400
	st := inmem.NewState(inmem.WithHistoryCapacity(history))
	d := serve(t, listen(t, "tcp"), st)
	raw := pb.NewStateClient(dial(t, d.Addr))
	s, err := raw.Watch(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Send(&pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: &pb.Kind{Namespace: limitNS, Type: conformance.IntResourceType}}}))
	m, err := s.Recv()
	require.NoError(t, err)
	require.True(t, m.Established)
	require.NoError(t, s.Send(&pb.WatchClientMessage{Credits: 2}))

	fast := client(t, d.Addr)
	fastCh := make(chan state.Event, 16)
	require.NoError(t, fast.WatchKind(ctx, limitKind(), fastCh))
	var wg sync.WaitGroup
	fctx, stop := context.WithCancel(ctx)
	fastLog := collect(fctx, &wg, fastCh)
	defer func() { stop(); wg.Wait() }()

	changes := 0
	for i := range resources {
		require.NoError(t, st.Create(ctx, conformance.NewIntResource(limitNS, fmt.Sprintf("r%02d", i), 0)))
		changes++
	}
	for round := 1; round <= rounds; round++ {
		for i := range resources {
			_, err := st.ModifyWithResult(ctx, conformance.NewIntResource(limitNS, fmt.Sprintf("r%02d", i), 0), func(r resource.Resource) error {
				r.(*conformance.IntResource).TypedSpec().Value = round
				return nil
			})
			require.NoError(t, err, "the writer is never stalled")
			changes++
		}
	}
	waitFor(t, "the reading watcher keeps up", func() bool {
		at := map[string]int{}
		for _, ev := range fastLog.snapshot() {
			at[ev.Resource.Metadata().ID()] = int(ev.Resource.Metadata().Version().Value()) - 1
		}
		return len(at) == resources && allAt(at, rounds)
	})

	received, final := 0, map[string]int{}
	for len(final) < resources || !allAt(final, rounds) {
		m, err := s.Recv()
		require.NoError(t, err)
		for _, ev := range m.Events {
			received++
			final[ev.Resource.Metadata.Id] = int(ev.Resource.Metadata.Version) - 1
		}
		require.NoError(t, s.Send(&pb.WatchClientMessage{Credits: 1}))
	}
	limit := 2*32 + 8 + history + 2*resources // in flight, behind, coalesced
	assert.LessOrEqual(t, received, limit, "%d events for %d changes: the backlog was coalesced", received, changes)
	t.Logf("the stalled client received %d events for %d changes", received, changes)
}

func allAt(m map[string]int, v int) bool {
	for _, x := range m {
		if x != v {
			return false
		}
	}
	return true
}

// TestN3_MessagesAreBounded: with a bound on message sizes, a List of
// more than fits in one message arrives whole, in order; a resource
// larger than the bound fails its Get (and ends a watch that meets it)
// with ResourceExhausted naming it; the client refuses to send a request
// larger than its bound.
func TestN3_MessagesAreBounded(t *testing.T) {
	ctx := testCtx(t)
	const bound = 64 << 10
	st := inmem.NewState()
	d := serve(t, listen(t, "tcp"), st, remote.WithMaxMessageSize(bound))
	cl := client(t, d.Addr, remote.WithClientMaxMessageSize(bound))
	kind := resource.NewKind(limitNS, conformance.StrResourceType)
	for i := range 200 {
		require.NoError(t, st.Create(ctx, conformance.NewStrResource(limitNS, fmt.Sprintf("s%03d", i), strings.Repeat("v", 1000))))
	}
	list, err := cl.List(ctx, kind)
	require.NoError(t, err)
	require.Len(t, list.Items, 200)
	for i, r := range list.Items {
		assert.Equal(t, fmt.Sprintf("s%03d", i), r.Metadata().ID())
	}

	ch := make(chan state.Event, 1)
	require.NoError(t, cl.WatchKind(ctx, kind, ch))
	require.NoError(t, st.Create(ctx, conformance.NewStrResource(limitNS, "huge", strings.Repeat("x", 2*bound))))
	_, err = cl.Get(ctx, resource.NewPointer(limitNS, conformance.StrResourceType, "huge"))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	assert.Contains(t, err.Error(), "StrResources.test.resgraph.dev(limits/huge) encodes to")
	ev := <-ch
	require.Equal(t, state.Errored, ev.Type)
	assert.Equal(t, codes.ResourceExhausted, status.Code(ev.Error), "%v", ev.Error)

	err = cl.Create(ctx, conformance.NewStrResource(limitNS, "too-big", strings.Repeat("y", 2*bound)))
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
	_, err = st.Get(ctx, resource.NewPointer(limitNS, conformance.StrResourceType, "too-big"))
	assert.True(t, state.IsNotFoundError(err), "nothing written")
}
