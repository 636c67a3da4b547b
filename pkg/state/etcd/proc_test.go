package etcd_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
)

// The multi-process tests re-execute the test binary as Runtimes: TestMain
// sees envChild and runs childMain instead of the tests. A child runs one
// Runtime on the etcd state with the chain stages it is told, prints
// "ready" once it runs, and on SIGTERM stops the Runtime and prints its
// state's counters as one JSON line.
const (
	envChild      = "RESGRAPH_ETCD_TEST_CHILD"
	envEndpoint   = "RESGRAPH_ETCD_TEST_ENDPOINT"
	envPrefix     = "RESGRAPH_ETCD_TEST_PREFIX"
	envStages     = "RESGRAPH_ETCD_TEST_STAGES"
	envFinalizers = "RESGRAPH_ETCD_TEST_FINALIZERS"
)

// childCounts is what a child reports when it stops.
type childCounts struct {
	Writes, Conflicts, Races, Relists int64
}

// childMain runs a child Runtime until SIGTERM; it returns the exit code.
func childMain(name string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "child %s: %v\n", name, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	logger, err := zap.NewDevelopment(zap.IncreaseLevel(zap.WarnLevel))
	if err != nil {
		return fail(err)
	}
	logger = logger.Named(name)
	cli, err := etcdtest.NewClient(os.Getenv(envEndpoint))
	if err != nil {
		return fail(err)
	}
	defer cli.Close()
	var counters etcd.Counters
	st, err := etcd.New(ctx, cli, registry(), etcd.WithPrefix(os.Getenv(envPrefix)),
		etcd.WithCounters(&counters), etcd.WithLogger(logger))
	if err != nil {
		return fail(err)
	}
	rt, err := runtime.New(st, logger)
	if err != nil {
		return fail(err)
	}
	finalizers, _ := strconv.ParseBool(os.Getenv(envFinalizers))
	for _, s := range strings.Split(os.Getenv(envStages), ",") {
		c, err := chainStage(s, finalizers)
		if err != nil {
			return fail(err)
		}
		if err := rt.RegisterController(c); err != nil {
			return fail(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	fmt.Println("ready")
	if err := <-done; err != nil {
		return fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(childCounts{
		Writes: counters.Writes.Load(), Conflicts: counters.Conflicts.Load(),
		Races: counters.Races.Load(), Relists: counters.Relists.Load(),
	}); err != nil {
		return fail(err)
	}
	return 0
}

// child is a Runtime running in a child process.
type child struct {
	name   string
	cmd    *exec.Cmd
	lines  chan string   // the child's stdout, line by line (it prints two); closed at EOF
	stderr *syncBuffer   // the child's log
	exited chan struct{} // closed once the process exited and its output was read
	err    error         // Wait's result; set before exited is closed
}

// syncBuffer is a buffer that a child's output and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// childTimeout bounds how long a child may take to start or to stop.
const childTimeout = 30 * time.Second

// startChild starts a Runtime running the chain stages in a child
// process on the state at prefix, and waits until it runs. The test's
// cleanup kills it if it still runs, and logs its output if the test
// failed.
func startChild(t testing.TB, name, prefix string, finalizers bool, stages ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envChild+"="+name, envEndpoint+"="+server.Endpoint(), envPrefix+"="+prefix,
		envStages+"="+strings.Join(stages, ","), envFinalizers+"="+strconv.FormatBool(finalizers))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c := &child{name: name, cmd: cmd, lines: make(chan string, 64), stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child %s: %v", name, err)
	}
	go c.read(out)
	t.Cleanup(func() {
		c.kill()
		if t.Failed() {
			t.Logf("child %s's log:\n%s", name, c.stderr)
		}
	})
	if line, err := c.line(); err != nil || line != "ready" {
		t.Fatalf("child %s did not start: %q %v\n%s", name, line, err, c.stderr)
	}
	return c
}

// read forwards the child's stdout to c.lines, then waits for its exit.
func (c *child) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		c.lines <- sc.Text()
	}
	close(c.lines)
	c.err = c.cmd.Wait()
	close(c.exited)
}

// line returns the next line the child prints.
func (c *child) line() (string, error) {
	t := time.NewTimer(childTimeout)
	defer t.Stop()
	select {
	case l, ok := <-c.lines:
		if !ok {
			return "", errors.New("the child's output ended")
		}
		return l, nil
	case <-t.C:
		return "", fmt.Errorf("no output within %s", childTimeout)
	}
}

// stop stops the child with SIGTERM and returns the counters it reports;
// it must exit with status 0.
func (c *child) stop(t testing.TB) childCounts {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("stop child %s: %v", c.name, err)
	}
	line, err := c.line()
	if err != nil {
		t.Fatalf("child %s did not report its counters: %v\n%s", c.name, err, c.stderr)
	}
	var counts childCounts
	if err := json.Unmarshal([]byte(line), &counts); err != nil {
		t.Fatalf("child %s: %q: %v", c.name, line, err)
	}
	c.wait(t)
	if c.err != nil {
		t.Fatalf("child %s exited with %v\n%s", c.name, c.err, c.stderr)
	}
	return counts
}

// kill kills the child with SIGKILL (if it still runs) and waits until
// it exited.
func (c *child) kill() {
	select {
	case <-c.exited:
		return
	default:
	}
	_ = c.cmd.Process.Kill()
	<-c.exited
}

// wait waits until the child exited.
func (c *child) wait(t testing.TB) {
	t.Helper()
	timer := time.NewTimer(childTimeout)
	defer timer.Stop()
	select {
	case <-c.exited:
	case <-timer.C:
		t.Fatalf("child %s did not exit within %s", c.name, childTimeout)
	}
}
