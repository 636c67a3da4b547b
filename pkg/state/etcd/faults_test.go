package etcd_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
)

// The fault tests run an etcd server of their own (in parallel with each
// other), which they stop, restart, compact and cut off, and check after
// each fault that every watch ends up holding exactly what etcd holds.

// startServer starts an etcd server for one test, closed at its end.
func startServer(t *testing.T) *etcdtest.Server {
	t.Helper()
	dir, err := os.MkdirTemp(etcdtest.TempRoot(), "resgraph-etcd-fault-")
	require.NoError(t, err)
	srv, err := etcdtest.Start(dir)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns a client of endpoint, closed at the end of the test.
func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	cli, err := etcdtest.NewClient(endpoint)
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return cli
}

// observed returns a logger that records warnings and errors.
func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.WarnLevel)
	return zap.New(core), logs
}

// relists counts the lost watches the state's log reports (each is
// followed by a relist), and those that a compaction ended.
func relists(logs *observer.ObservedLogs) (lost, compacted int) {
	for _, e := range logs.FilterMessage("etcd state: watch ended; relisting").All() {
		lost++
		if c, ok := e.ContextMap()["compacted"].(int64); ok && c > 0 {
			compacted++
		}
	}
	return lost, compacted
}

// startWatches starts the watches of the fault tests on the kind of ns
// IntResources: in st, a slow WatchKind (channel of one), a WatchKind of
// the resources labelled even, a WatchKindAggregated, a Watch of ids[1];
// in other (another process), a WatchKindAggregated.
func startWatches(ws *watchers, st, other state.State, ids []resource.ID) (agg *view) {
	kind := resource.NewKind("ns", conformance.IntResourceType)
	ws.kind("slow", st, kind, 1, all)
	ws.kind("even", st, kind, 8, isEven, state.WatchWithLabelQuery(resource.LabelEqual("parity", "even")))
	agg = ws.aggregated("aggregated", st, kind)
	ws.single("single "+ids[1], st, resource.NewPointer("ns", conformance.IntResourceType, ids[1]))
	ws.aggregated("other process", other, kind)
	return agg
}

// TestFault_ServerRestartMidWatch: the etcd server is stopped for three
// seconds and restarted while watches run and a writer writes. Writes
// during the outage fail with a clear error (a patient one succeeds once
// the server is back or fails as clearly); none is half-done; and every
// watch ends up holding exactly what etcd holds, without breaking the
// rules of watches and without being cut off (S8–S12).
func TestFault_ServerRestartMidWatch(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := startServer(t)
	prefix := newPrefix()
	logger, logs := observed()
	ctx := context.Background()
	stA, err := etcd.New(ctx, newClient(t, srv.Endpoint()), registry(), etcd.WithPrefix(prefix),
		etcd.WithHistoryCapacity(16), etcd.WithLogger(logger))
	require.NoError(t, err)
	cliB := newClient(t, srv.Endpoint())
	stB, err := etcd.New(ctx, cliB, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	kind := resource.NewKind("ns", conformance.IntResourceType)

	ids := idsOf("r", 12)
	w := newWriter(stB, "ns", ids...)
	w.steps(t, 30)
	ws := newWatchers(t)
	startWatches(ws, stA, stB, ids)
	w.steps(t, 60)

	srv.Stop()
	down := time.Now()
	patient := make(chan error, 1)
	go func() {
		pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		patient <- stA.Modify(pctx, conformance.NewIntResource("ns", "patient", 0), func(r resource.Resource) error {
			r.(*conformance.IntResource).TypedSpec().Value = 42
			return nil
		})
	}()
	// Writes with a short deadline for three seconds: each fails, clearly.
	failures := 0
	for time.Since(down) < 3*time.Second {
		err := w.step(250 * time.Millisecond)
		require.Error(t, err, "a write while the server is down")
		assert.True(t, isClear(err, "ns"), "a clear error: %v", err)
		failures++
	}
	require.NoError(t, srv.Restart())
	t.Logf("server down for %s; %d writes failed meanwhile", time.Since(down).Round(time.Millisecond), failures)

	w.checkStored(t, cliB, prefix)
	w.steps(t, 60)
	if err := <-patient; err != nil {
		assert.True(t, isClear(err, "ns"), "the patient write failed, clearly: %v", err)
		t.Logf("the patient write failed: %v", err)
	} else {
		r, err := stB.Get(ctx, resource.NewPointer("ns", conformance.IntResourceType, "patient"))
		require.NoError(t, err, "the patient write succeeded: its resource is there")
		assert.Equal(t, 42, r.(*conformance.IntResource).TypedSpec().Value)
		t.Logf("the patient write succeeded once the server was back")
	}
	ws.converge(stB, kind, 30*time.Second)
	w.checkStored(t, cliB, prefix)
	lost, compacted := relists(logs)
	t.Logf("watches lost and relisted: %d (%d by a compaction)", lost, compacted)
}

// TestFault_CompactionPastAWatch: the connection of a state to etcd is cut
// (a TCP proxy that the test controls) while another state writes —
// updates, destroys and recreations, a value that does not decode — and
// compacts the history past the cut-off state's revision; one watch's
// consumer is paused meanwhile and until its backlog is beyond the kept
// history. When the connection comes back, the state's watch is refused
// (compacted), relists, and every watch ends up holding exactly what etcd
// holds, without breaking the rules of watches and without being cut off
// (S12: the final state of every resource, coalesced). A bookmark from
// before the relist is then a buffer overrun (S11).
func TestFault_CompactionPastAWatch(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := startServer(t)
	proxy, err := etcdtest.NewProxy(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	prefix := newPrefix()
	logger, logs := observed()
	ctx := context.Background()
	const history = 8
	stA, err := etcd.New(ctx, newClient(t, proxy.Endpoint()), registry(), etcd.WithPrefix(prefix),
		etcd.WithHistoryCapacity(history), etcd.WithLogger(logger))
	require.NoError(t, err)
	cliB := newClient(t, srv.Endpoint())
	stB, err := etcd.New(ctx, cliB, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	kind := resource.NewKind("ns", conformance.IntResourceType)

	ids := idsOf("r", 12)
	w := newWriter(stB, "ns", ids...)
	w.steps(t, 30)
	ws := newWatchers(t)
	agg := startWatches(ws, stA, stB, ids)
	paused := ws.kind("paused", stA, kind, 1, all)
	w.steps(t, 30)
	ws.converge(stB, kind, 30*time.Second)
	before := agg.lastBookmark()

	paused.pause()
	proxy.Cut()
	w.steps(t, 40)
	// ids[1] (watched alone) destroyed and created again; ids[3]
	// destroyed; ids[2] holds a value that does not decode; a key that
	// does not decode appears.
	for _, id := range []resource.ID{ids[1], ids[3]} {
		err := stB.Destroy(ctx, resource.NewPointer("ns", conformance.IntResourceType, id))
		if !state.IsNotFoundError(err) {
			require.NoError(t, err)
		}
	}
	w.skip(ids[3]) // it stays destroyed
	require.NoError(t, stB.Create(ctx, conformance.NewIntResource("ns", ids[1], -1)))
	kindKey := prefix + "ns/" + conformance.IntResourceType + "/"
	_, err = cliB.Put(ctx, kindKey+ids[2], "not an encoding")
	require.NoError(t, err)
	w.skip(ids[2]) // its writes would fail, naming its key
	_, err = cliB.Put(ctx, kindKey+"junk", "not an encoding either")
	require.NoError(t, err)
	resp, err := cliB.Get(ctx, "health")
	require.NoError(t, err)
	_, err = cliB.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical())
	require.NoError(t, err)

	proxy.Restore()
	// KindHead waits until the watch applied the newest change: after
	// the relist.
	_, err = stA.(state.KindHeadReporter).KindHead(ctx, kind)
	require.NoError(t, err)
	lost, compacted := relists(logs)
	assert.Positive(t, compacted, "the cut-off watch was refused as compacted and relisted (lost watches: %d)", lost)
	// A bookmark from before the cut cannot be resumed: the relist
	// replaced what followed with its differences (S11).
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err = stA.WatchKind(wctx, kind, make(chan state.Event), state.WithKindStartFromBookmark(before))
	assert.True(t, state.IsBufferOverrunError(err), "a bookmark from before the cut: %v", err)

	// The paused consumer falls further behind than the history kept.
	w.steps(t, 4*history)
	paused.resume()
	ws.converge(stB, kind, 30*time.Second)
}

// TestFault_BookmarksAfterARelist: after a relist that coalesced changes
// the state did not watch, no bookmark from before it can be resumed
// (S11) — whatever the state did since: when the relist's changes
// overwrote older ones in a full history, and when a bookmark from before
// the watch started made the state read etcd's (compacted) history.
// Bookmarks: the watch's last before the cut; one from another process
// taken before the watch started; one from another process inside the
// stretch the state did not watch (a resource created and destroyed
// there), tried in that order.
func TestFault_BookmarksAfterARelist(t *testing.T) {
	t.Parallel() // on a server of its own
	for _, tc := range []struct {
		name      string
		history   int
		beforeCut int
	}{
		{"history full when the relist comes", 8, 20},
		{"history whole since the watch started", 64, 4},
	} {
		t.Run(tc.name, func(t *testing.T) { bookmarksAfterARelist(t, tc.history, tc.beforeCut) })
	}
}

func bookmarksAfterARelist(t *testing.T, history, beforeCut int) {
	srv := startServer(t)
	proxy, err := etcdtest.NewProxy(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	prefix := newPrefix()
	logger, logs := observed()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stA, err := etcd.New(ctx, newClient(t, proxy.Endpoint()), registry(), etcd.WithPrefix(prefix),
		etcd.WithHistoryCapacity(history), etcd.WithLogger(logger))
	require.NoError(t, err)
	cliB := newClient(t, srv.Endpoint())
	stB, err := etcd.New(ctx, cliB, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	kind := resource.NewKind("ns", conformance.IntResourceType)

	w := newWriter(stB, "ns", idsOf("r", 4)...)
	w.steps(t, 8)
	probe := make(chan []state.Event, 256)
	require.NoError(t, stB.WatchKindAggregated(ctx, kind, probe, state.WithBootstrapContents(true)))
	boot := <-probe
	beforeStart := boot[len(boot)-1].Bookmark
	w.steps(t, 2)
	ws := newWatchers(t)
	agg := ws.aggregated("aggregated", stA, kind)
	w.steps(t, beforeCut)
	ws.converge(stB, kind, 30*time.Second)
	before := agg.lastBookmark()

	proxy.Cut()
	w.steps(t, 3)
	resp, err := cliB.Get(ctx, "health")
	require.NoError(t, err)
	_, err = cliB.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical())
	require.NoError(t, err)
	short := conformance.NewIntResource("ns", "short-lived", 1)
	require.NoError(t, stB.Create(ctx, short))
	inside := bookmarkOf(t, probe, state.Created, "short-lived")
	require.NoError(t, stB.Destroy(ctx, resource.PointerOf(short.Metadata())))
	proxy.Restore()
	_, err = stA.(state.KindHeadReporter).KindHead(ctx, kind) // after the relist
	require.NoError(t, err)
	_, compacted := relists(logs)
	require.Positive(t, compacted, "the watch was refused as compacted and relisted")

	for _, bm := range []struct {
		name string
		b    state.Bookmark
	}{{"before the cut", before}, {"before the watch started", beforeStart}, {"inside the stretch not watched", inside}} {
		err = stA.WatchKind(ctx, kind, make(chan state.Event), state.WithKindStartFromBookmark(bm.b))
		assert.True(t, state.IsBufferOverrunError(err), "a bookmark %s: %v", bm.name, err)
	}
	ws.converge(stB, kind, 30*time.Second)
}

// bookmarkOf receives batches until an event of type typ for id, and
// returns its bookmark.
func bookmarkOf(t *testing.T, ch <-chan []state.Event, typ state.EventType, id resource.ID) state.Bookmark {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case batch := <-ch:
			for _, ev := range batch {
				if ev.Type == typ && ev.Resource.Metadata().ID() == id {
					return ev.Bookmark
				}
			}
		case <-timeout.C:
			t.Fatalf("no %s event for %s", typ, id)
		}
	}
}

// TestFault_UndecodableValueMidWatch: a value that does not decode is
// written over a watched resource while watches run: they report the
// resource destroyed (it is absent for the state), the error of a read or
// write of it names its key, the other resources go on; once the key is
// cleaned up the resource can be created again, and every watch ends up
// holding exactly what etcd holds.
func TestFault_UndecodableValueMidWatch(t *testing.T) {
	prefix := newPrefix()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := etcd.New(ctx, client, registry(), etcd.WithPrefix(prefix), etcd.WithHistoryCapacity(8))
	require.NoError(t, err)
	other, err := etcd.New(ctx, client, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	kind := resource.NewKind("ns", conformance.IntResourceType)
	ids := idsOf("r", 6)
	w := newWriter(st, "ns", ids...)
	w.steps(t, 12)
	ws := newWatchers(t)
	startWatches(ws, st, other, ids)
	ws.converge(st, kind, 30*time.Second)

	bad := resource.NewPointer("ns", conformance.IntResourceType, ids[1])
	badKey := prefix + "ns/" + conformance.IntResourceType + "/" + ids[1]
	_, err = client.Put(ctx, badKey, "not an encoding")
	require.NoError(t, err)
	w.skip(ids[1]) // its writes fail, naming the key (below)
	w.steps(t, 20)
	ws.converge(st, kind, 30*time.Second)

	_, err = st.Get(ctx, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), badKey, "a read names the key")
	err = st.Modify(ctx, conformance.NewIntResource("ns", ids[1], 0), func(resource.Resource) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), badKey, "a write names the key")
	err = st.Destroy(ctx, bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), badKey, "a destroy names the key")

	_, err = client.Delete(ctx, badKey)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("ns", ids[1], 7)))
	ws.converge(st, kind, 30*time.Second)
}

// TestFault_RelistThatFindsNothingChanged: while a state is cut off from
// etcd, a resource is created and destroyed and the history compacted past
// both. The state's watch relists and finds what it held: its watches get
// nothing (nothing they saw changed), its kind head stays the bookmark
// they hold (so that the Runtime's quiescence check still matches), a
// bookmark from before the cut resumes, and one taken by another process
// between the creation and the destruction is a buffer overrun: the state
// cannot replay what it did not watch (S11).
func TestFault_RelistThatFindsNothingChanged(t *testing.T) {
	t.Parallel() // on a server of its own
	srv := startServer(t)
	proxy, err := etcdtest.NewProxy(srv.Addr())
	require.NoError(t, err)
	t.Cleanup(proxy.Close)
	prefix := newPrefix()
	logger, logs := observed()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stA, err := etcd.New(ctx, newClient(t, proxy.Endpoint()), registry(), etcd.WithPrefix(prefix), etcd.WithLogger(logger))
	require.NoError(t, err)
	cliB := newClient(t, srv.Endpoint())
	stB, err := etcd.New(ctx, cliB, registry(), etcd.WithPrefix(prefix))
	require.NoError(t, err)
	kind := resource.NewKind("ns", conformance.IntResourceType)

	ids := idsOf("r", 4)
	w := newWriter(stB, "ns", ids...)
	w.steps(t, 8)
	ws := newWatchers(t)
	agg := startWatches(ws, stA, stB, ids)
	ws.converge(stB, kind, 30*time.Second)
	before := agg.lastBookmark()
	head, err := stA.(state.KindHeadReporter).KindHead(ctx, kind)
	require.NoError(t, err)
	require.Equal(t, before, head, "the kind head is the bookmark of the caught-up watch")

	// Another process's watch sees the short-lived resource.
	ch := make(chan state.Event, 8)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	require.NoError(t, stB.WatchKind(wctx, kind, ch))
	proxy.Cut()
	require.NoError(t, stB.Create(ctx, conformance.NewIntResource("ns", "short-lived", 1)))
	created := <-ch
	require.Equal(t, state.Created, created.Type)
	require.NoError(t, stB.Destroy(ctx, resource.NewPointer("ns", conformance.IntResourceType, "short-lived")))
	require.Equal(t, state.Destroyed, (<-ch).Type)
	resp, err := cliB.Get(ctx, "health")
	require.NoError(t, err)
	_, err = cliB.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical())
	require.NoError(t, err)
	proxy.Restore()

	// KindHead reads the kind's newest revision (the destruction) and
	// waits until the watch has it: after the relist.
	after, err := stA.(state.KindHeadReporter).KindHead(ctx, kind)
	require.NoError(t, err)
	_, compacted := relists(logs)
	require.Positive(t, compacted, "the watch was refused as compacted and relisted")
	assert.Equal(t, before, after, "a relist that changed nothing leaves the kind head where the watches are")
	ws.converge(stB, kind, 30*time.Second)
	assert.Equal(t, before, agg.lastBookmark(), "the watches got nothing")

	err = stA.WatchKind(wctx, kind, make(chan state.Event), state.WithKindStartFromBookmark(created.Bookmark))
	assert.True(t, state.IsBufferOverrunError(err), "a bookmark inside what the state did not watch: %v", err)
	assert.NoError(t, stA.WatchKind(wctx, kind, make(chan state.Event, 1), state.WithKindStartFromBookmark(before)),
		"a bookmark from before the cut resumes: nothing it saw changed")
}
