package remote_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/internal/certtest"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/remote/internal/pb"
)

// TestA1_HostileCertificates: certificates in the writer's name (CN
// bystander) that are expired, not yet valid, or signed by another CA —
// or no certificate — get no connection: every call fails with
// Unavailable, nothing is written, and each refused connection is one
// audit record.
func TestA1_HostileCertificates(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "")
	before := e.seed(t)
	by := e.newBystander(t)
	other, err := certtest.NewCA("another CA")
	require.NoError(t, err)
	leaves := map[string]struct {
		ca   *certtest.CA
		leaf certtest.Leaf
	}{
		"expired":     {e.ca, certtest.Leaf{CommonName: "bystander", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)}},
		"not yet":     {e.ca, certtest.Leaf{CommonName: "bystander", NotBefore: time.Now().Add(time.Hour), NotAfter: time.Now().Add(48 * time.Hour)}},
		"another CA":  {other, certtest.Leaf{CommonName: "bystander"}},
		"self-signed": {nil, certtest.Leaf{CommonName: "bystander"}},
	}
	var clients []state.State
	for name, l := range leaves {
		ca := l.ca
		if ca == nil {
			ca, err = certtest.NewCA("bystander")
			require.NoError(t, err)
		}
		cert, err := ca.Issue(l.leaf)
		require.NoError(t, err, name)
		clients = append(clients, accessClient(t, tlsConn(t, e.tcp, e.ca.ClientConfig(cert))))
	}
	clients = append(clients, accessClient(t, tlsConn(t, e.tcp, e.ca.ClientConfig(tls.Certificate{}))))
	by.unaffected(t, func(actx context.Context, passed func()) {
		for actx.Err() == nil {
			for i, cl := range clients {
				err := cl.Create(ctx, conformance.NewIntResource("two", fmt.Sprint("c", i), 1))
				assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
			}
			passed()
		}
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
	refused := e.audit.FilterField(stringField("rule", "authentication")).All()
	assert.GreaterOrEqual(t, len(refused), len(clients), "each refused connection is audited")
	for _, r := range refused {
		assert.Equal(t, "denied", r.ContextMap()["decision"])
		assert.Contains(t, r.ContextMap()["reason"], "mutual TLS handshake")
	}
}

// TestN4_HostileClientLiesAboutItsEncoding: a writer whose requests say
// one encoding and carry another (JSON bytes said to be protobuf,
// protobuf-like bytes said to be JSON, a spec of another shape, a request
// that is JSON instead of protobuf) gets InvalidArgument naming the
// problem, and nothing is written.
func TestN4_HostileClientLiesAboutItsEncoding(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "")
	before := e.seed(t)
	by := e.newBystander(t)
	conn := e.certConn(t, "bystander")
	raw := pb.NewStateClient(conn)
	lie := func(format uint32, spec string) *pb.Resource {
		return &pb.Resource{Metadata: &pb.Metadata{Namespace: "two", Type: conformance.IntResourceType, Id: "lie"}, SpecFormat: format, Spec: []byte(spec)}
	}
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"JSON said to be protobuf", func() error {
			_, err := raw.Create(ctx, &pb.CreateRequest{Resource: lie(2, `{"Value":1}`)})
			return err
		}, "written as protobuf"},
		{"bytes said to be JSON", func() error { _, err := raw.Create(ctx, &pb.CreateRequest{Resource: lie(0, "\x08\x01")}); return err }, "decode"},
		{"another shape", func() error {
			_, err := raw.Create(ctx, &pb.CreateRequest{Resource: lie(0, `{"Value":"one"}`)})
			return err
		}, "decode"},
		{"update with a lie", func() error {
			r := lie(2, `{"Value":5}`)
			r.Metadata.Id, r.Metadata.Version = "a", 1
			_, err := raw.Update(ctx, &pb.UpdateRequest{Resource: r})
			return err
		}, "written as protobuf"},
		{"a JSON request", func() error {
			return fuzzCall(ctx, conn, "Create", []byte(`{"resource":{"metadata":{"namespace":"two"}}}`), nil)
		}, "request"},
	}
	by.unaffected(t, func(actx context.Context, passed func()) {
		for actx.Err() == nil {
			for _, c := range cases {
				err := c.call()
				assert.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", c.name, err)
				if assert.Error(t, err, c.name) {
					assert.Contains(t, strings.ToLower(err.Error()), c.want, c.name)
				}
			}
			passed()
		}
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
}

// TestN3_HostileWatchThatNeverReads: a reader opens a watch of its
// namespace, takes what it granted and then reads nothing while a writer
// changes the kind thousands of times: the bystander and the writer go
// on, and the server sent the silent reader no more than its credits
// allow (the rest coalesced, S12): when it reads again it gets few events,
// ending at the final state. When it leaves, nothing of it is left.
func TestN3_HostileWatchThatNeverReads(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	const history = 16
	e := newAccessEnv(t, "reader-one", inmem.WithHistoryCapacity(history))
	e.seed(t)
	by := e.newBystander(t)
	// A failure's bound, not a measure: without flow control the silent
	// reader's final drain may never end.
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	s, err := pb.NewStateClient(e.unixConn(t)).Watch(wctx)
	require.NoError(t, err)
	require.NoError(t, s.Send(&pb.WatchClientMessage{Request: &pb.WatchRequest{Kind: &pb.Kind{Namespace: "one", Type: conformance.IntResourceType}}}))
	m, err := s.Recv()
	require.NoError(t, err)
	require.True(t, m.Established)
	require.NoError(t, s.Send(&pb.WatchClientMessage{Credits: 2}))

	// The writer paces its rounds on a reading watcher (the bystander's
	// identity), so that the server has every change to send before the
	// next one: only the credits keep it from sending them all.
	fastCh := make(chan state.Event, 64)
	require.NoError(t, accessClient(t, e.certConn(t, "bystander")).WatchKind(wctx, resource.NewKind("one", conformance.IntResourceType), fastCh))
	var wg sync.WaitGroup
	defer wg.Wait()
	fast := collect(wctx, &wg, fastCh)
	const resources, rounds = 10, 100
	by.unaffected(t, func(actx context.Context, passed func()) {
		for i := range resources {
			require.NoError(t, e.st.Create(ctx, conformance.NewIntResource("one", fmt.Sprintf("r%02d", i), 0)))
		}
		for round := 1; round <= rounds && actx.Err() == nil; round++ {
			for i := range resources {
				_, err := e.st.ModifyWithResult(ctx, conformance.NewIntResource("one", fmt.Sprintf("r%02d", i), 0), func(r resource.Resource) error {
					r.(*conformance.IntResource).TypedSpec().Value = round
					return nil
				})
				require.NoError(t, err, "the writer is never stalled")
			}
			waitFor(t, "the reading watcher keeps up", func() bool { return len(fast.snapshot()) >= resources*(round+1) })
		}
		passed()
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
	limit := 2*32 + 8 + history + 2*resources // in flight, behind, the state's history, coalesced
	assert.LessOrEqual(t, received, limit, "%d events for %d changes: the backlog was coalesced", received, resources*(rounds+1))
	t.Logf("the silent reader received %d events for %d changes", received, resources*(rounds+1))
	cancel()
}

// TestA3_HostileClientDisconnectingMidWrite: clients that close their
// connection while their writes are in flight: a reader's writes are
// denied and none is written; a writer's either committed or not, and
// each that committed is one audit record with its version (none
// without), so the audit log and the state agree.
func TestA3_HostileClientDisconnectingMidWrite(t *testing.T) {
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "reader-one")
	before := e.seed(t)
	by := e.newBystander(t)
	const writes = 64
	pass := 0
	by.unaffected(t, func(actx context.Context, passed func()) {
		for ; actx.Err() == nil; pass++ {
			for _, who := range []string{"reader", "writer"} {
				conn := e.unixConn(t)
				if who == "writer" {
					conn = e.certConn(t, "bystander")
				}
				ns := map[string]string{"reader": "one", "writer": "two"}[who]
				vanishMidWrites(t, ctx, conn, ns, fmt.Sprintf("p%d-", pass), writes)
			}
			passed()
		}
	})
	after := e.contents(t)
	for k, v := range before {
		assert.Equal(t, v, after[k], "%s unchanged", k)
	}
	committed := 0
	for p := range pass {
		for i := range writes {
			id := fmt.Sprintf("p%d-%02d", p, i)
			_, err := e.st.Get(ctx, resource.NewPointer("one", conformance.IntResourceType, id))
			assert.True(t, state.IsNotFoundError(err), "the reader wrote %s", id)
			_, err = e.st.Get(ctx, resource.NewPointer("two", conformance.IntResourceType, id))
			records := e.audit.FilterField(stringField("id", id)).FilterField(stringField("namespace", "two")).All()
			if err == nil {
				committed++
				require.Len(t, records, 1, "%s is written: one audit record", id)
				assert.Equal(t, uint64(1), records[0].ContextMap()["version"])
			} else {
				require.True(t, state.IsNotFoundError(err))
				for _, r := range records {
					assert.NotContains(t, r.ContextMap(), "version", "%s is not written: no record of a version", id)
				}
			}
		}
	}
	t.Logf("%d passes: %d of the writer's %d writes committed before it vanished", pass, committed, pass*writes)
}

// vanishMidWrites makes n writes in namespace ns at once over conn and
// closes conn when a quarter of them returned (or all did), while the
// others are in flight.
func vanishMidWrites(t *testing.T, ctx context.Context, conn *grpc.ClientConn, ns, prefix string, n int) {
	cl := accessClient(t, conn)
	var wg sync.WaitGroup
	var returned atomic.Int64
	quarter := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cl.Create(ctx, conformance.NewIntResource(ns, fmt.Sprintf("%s%02d", prefix, i), 1))
			if ns == "one" {
				assert.Contains(t, []codes.Code{codes.PermissionDenied, codes.Canceled, codes.Unavailable}, status.Code(err), "%v", err)
			}
			if returned.Add(1) == int64(n/4) {
				close(quarter)
			}
		}()
	}
	<-quarter
	_ = conn.Close()
	wg.Wait()
}

// TestN3_HostileTenThousandConnections: another process (this test
// binary, re-executed) opens 10k connections to the unix socket as a uid
// with no role — half of them silent, half sending bytes that are not
// HTTP/2 — while calls of that uid are PermissionDenied: the bystander is
// served throughout, nothing is written, and once the process is gone,
// nothing of its connections is left on the server.
func TestN3_HostileTenThousandConnections(t *testing.T) {
	const n = 10_000
	noLeaks(t)
	ctx := testCtx(t)
	e := newAccessEnv(t, "")
	before := e.seed(t)
	by := e.newBystander(t)
	attacker := accessClient(t, e.unixConn(t))
	by.unaffected(t, func(actx context.Context, passed func()) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), floodSocketEnv+"="+strings.TrimPrefix(e.unix, "unix://"), floodCountEnv+"="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		assert.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("opened %d\n", n), line)
		for range 100 {
			_, err := attacker.Get(ctx, resource.NewPointer("one", conformance.IntResourceType, "a"))
			assert.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		}
		passed()
		<-actx.Done()
		_ = stdin.Close() // the flood ends: its process closes its connections and exits
		assert.NoError(t, cmd.Wait())
	})
	assert.Equal(t, before, e.contents(t), "nothing written")
}

// The environment of the flooding process: the socket to flood, and how
// many connections to open.
const (
	floodSocketEnv = "RESGRAPH_TEST_FLOOD_SOCKET"
	floodCountEnv  = "RESGRAPH_TEST_FLOOD_COUNT"
)

// flood opens count connections to the unix socket path, writes bytes
// that are not HTTP/2 on every other one, says "opened N" on stdout and
// holds them until stdin ends; it returns the process's exit code.
func flood(path, count string) int {
	n, err := strconv.Atoi(count)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		return 2
	}
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c, err := dialUnix(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "flood: connection %d: %v\n", i, err)
			return 1
		}
		if i%2 == 1 {
			_, _ = c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		}
		conns = append(conns, c)
	}
	fmt.Printf("opened %d\n", len(conns))
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		_ = c.Close()
	}
	return 0
}

// dialUnix connects to the unix socket path, trying again while the
// server's queue of connections to accept is full (EAGAIN: a flooding
// client paces itself on the server's accepts), for up to a minute.
func dialUnix(path string) (net.Conn, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("unix", path)
		if err == nil || !errors.Is(err, syscall.EAGAIN) || time.Now().After(deadline) {
			return c, err
		}
		time.Sleep(time.Millisecond)
	}
}
