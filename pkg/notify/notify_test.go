package notify_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/notify"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// listen listens for notifications on socket (a path, or "@name").
func listen(t *testing.T, socket string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: socket, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// next reads the next notification, failing the test after 30 s.
func next(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	require.NoError(t, err, "no notification within 30s")
	return string(buf[:n])
}

// until reads notifications until one contains want, and returns those
// read before it.
func until(t *testing.T, conn *net.UnixConn, want string) []string {
	t.Helper()
	var before []string
	for {
		m := next(t, conn)
		if strings.Contains(m, want) {
			return before
		}
		before = append(before, m)
	}
}

// TestSendTo_PathAndAbstractSockets: a notification reaches a socket named
// by a path and an abstract one ("@name"); without a socket nothing is
// sent and nothing fails; an unreachable socket is an error.
func TestSendTo_PathAndAbstractSockets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify.sock")
	abstract := fmt.Sprintf("@resgraph-notify-test-%d", os.Getpid())
	for _, socket := range []string{path, abstract} {
		conn := listen(t, socket)
		require.NoError(t, notify.SendTo(socket, "READY=1"))
		assert.Equal(t, "READY=1", next(t, conn))
	}
	require.NoError(t, notify.SendTo("", "READY=1"))
	assert.Error(t, notify.SendTo(filepath.Join(t.TempDir(), "none.sock"), "READY=1"))
}

// TestWatchdogInterval: $WATCHDOG_USEC for this process ($WATCHDOG_PID
// unset or ours), none for another process, an error for a bad value.
func TestWatchdogInterval(t *testing.T) {
	t.Setenv(notify.WatchdogEnv, "3000000")
	t.Setenv(notify.WatchdogPIDEnv, "")
	d, ok, err := notify.WatchdogInterval()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, d)
	t.Setenv(notify.WatchdogPIDEnv, "1")
	_, ok, err = notify.WatchdogInterval()
	require.NoError(t, err)
	assert.False(t, ok, "another process's watchdog")
	t.Setenv(notify.WatchdogPIDEnv, "")
	t.Setenv(notify.WatchdogEnv, "soon")
	_, _, err = notify.WatchdogInterval()
	assert.ErrorContains(t, err, "WATCHDOG_USEC")
}

type numSpec struct{ N int }
type numDef struct{}

func (numDef) Definition() typed.Definition {
	return typed.Definition{Type: "Nums.test.resgraph.dev", DefaultNamespace: "default"}
}

// gated is a Controller on Nums whose passes after its start pass wait for
// a token on gate; its start pass waits for start to be closed.
type gated struct {
	start chan struct{}
	gate  chan struct{}
}

func (g *gated) Name() string { return "gated" }
func (g *gated) Inputs() []controller.Input {
	return []controller.Input{{Namespace: "default", Type: "Nums.test.resgraph.dev", Kind: controller.InputWeak}}
}
func (g *gated) Outputs() []controller.Output { return nil }
func (g *gated) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for first := true; ; first = false {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		wait := g.gate
		if first {
			wait = g.start
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil
		}
	}
}

// TestServe_FollowsTheHealth: over a real Runtime, Serve sends READY=1
// only once the Runtime is ready (its controller's first pass ended;
// meanwhile a STATUS= names it), then WATCHDOG=1 while it is live, never
// while a pass is stuck past the health bound (a STATUS= says so instead),
// and STOPPING=1 when its context is done.
func TestServe_FollowsTheHealth(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "notify.sock")
	conn := listen(t, socket)
	t.Setenv(notify.SocketEnv, socket)
	t.Setenv(notify.WatchdogEnv, "20000") // 20 ms: WATCHDOG=1 every 10 ms
	t.Setenv(notify.WatchdogPIDEnv, "")
	st := inmem.NewState()
	g := &gated{start: make(chan struct{}), gate: make(chan struct{})}
	rt, err := runtime.New(st, zap.NewNop(), runtime.WithHealthBound(50*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(g))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran, served := make(chan error, 1), make(chan error, 1)
	go func() { ran <- rt.Run(ctx) }()
	go func() { served <- notify.Serve(ctx, rt.Observe()) }()

	for _, m := range until(t, conn, "STATUS=starting: controller gated: its first pass has not ended") {
		assert.NotContains(t, m, "READY=1")
	}
	close(g.start)
	before := until(t, conn, "READY=1")
	for _, m := range before {
		assert.NotContains(t, m, "WATCHDOG=1", "no watchdog before READY=1")
	}
	until(t, conn, "WATCHDOG=1")

	// A pass stuck past the bound: no WATCHDOG=1 from the STATUS that
	// says so until the one that says it is ready again.
	require.NoError(t, st.Create(ctx, typed.NewDefault[numSpec, numDef]("1", numSpec{N: 1})))
	until(t, conn, "STATUS=not live: controller gated: stuck in one pass")
	g.gate <- struct{}{}
	for _, m := range until(t, conn, "STATUS=ready") {
		assert.NotContains(t, m, "WATCHDOG=1", "no watchdog while not live")
	}
	until(t, conn, "WATCHDOG=1")

	cancel()
	until(t, conn, "STOPPING=1")
	require.NoError(t, <-served)
	require.NoError(t, <-ran)
}

// noHealth is an Observer that tells no health.
type noHealth struct{ observe.Observer }

// TestServe_RefusesWhatCannotWork: an Observer that tells no health and an
// unusable $WATCHDOG_USEC are errors at once; without $NOTIFY_SOCKET Serve
// sends nothing and returns when its context is done.
func TestServe_RefusesWhatCannotWork(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "notify.sock")
	listen(t, socket)
	t.Setenv(notify.SocketEnv, socket)
	t.Setenv(notify.WatchdogPIDEnv, "")
	assert.ErrorContains(t, notify.Serve(context.Background(), noHealth{}), "tells no health")
	rt, err := runtime.New(inmem.NewState(), zap.NewNop())
	require.NoError(t, err)
	t.Setenv(notify.WatchdogEnv, "-1")
	assert.ErrorContains(t, notify.Serve(context.Background(), rt.Observe()), "WATCHDOG_USEC")

	t.Setenv(notify.SocketEnv, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, notify.Serve(ctx, rt.Observe()))
}
