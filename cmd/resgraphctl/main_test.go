package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The tests drive the real binaries: TestMain builds resgraphctl and the
// demo once, into bin.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "resgraphctl-test-")
	if err == nil {
		bin = dir
		err = build(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// build builds resgraphctl and the demo (each in its own module) into dir.
func build(dir string) error {
	for _, b := range []struct{ name, src string }{{"resgraphctl", "."}, {"demo", "../demo"}} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b.name), ".")
		cmd.Dir = b.src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.src, err, out)
		}
	}
	return nil
}

// testTimeout bounds what a test waits for (a failure's bound, not a
// measure: every wait ends as soon as its condition holds).
const testTimeout = 2 * time.Minute

// ctl runs resgraphctl with args to its end and returns its stdout,
// stderr and exit code.
func ctl(t *testing.T, endpoint string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return ctlIn(t, endpoint, "", args...)
}

// ctlIn is ctl with stdin.
func ctlIn(t *testing.T, endpoint, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if endpoint != "" {
		args = append([]string{"--endpoint", endpoint}, args...)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "resgraphctl"), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errOut, strings.NewReader(stdin)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case asExit(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("resgraphctl %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

// process is a running binary whose output lines a test waits for.
type process struct {
	cmd    *exec.Cmd
	stdout *lines
	stderr *lines
	done   chan struct{}
	err    error
}

// start starts the binary name of bin with args; it is killed when the
// test ends if still running.
func start(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Env = append(os.Environ(), env...)
	p := &process{cmd: cmd, stdout: newLines(), stderr: newLines(), done: make(chan struct{})}
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	readers.Go(func() { p.stdout.read(outR) })
	readers.Go(func() { p.stderr.read(errR) })
	go func() {
		readers.Wait()
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s %s\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), p.stdout.text(), p.stderr.text())
		}
	})
	return p
}

// stop sends SIGTERM and waits for the exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	p.wait(t)
}

// kill sends SIGKILL and waits for the exit.
func (p *process) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	p.wait(t)
}

// wait waits for the process to exit and returns its exit code.
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(testTimeout):
		t.Fatalf("%s did not exit", p.cmd.Path)
	}
	if e, ok := p.err.(*exec.ExitError); ok {
		return e.ExitCode()
	}
	return 0
}

// lines collects the lines a process writes and wakes those waiting.
type lines struct {
	mu    sync.Mutex
	all   []string
	added chan struct{} // closed and replaced when a line comes or the stream ends
	ended bool
}

func newLines() *lines { return &lines{added: make(chan struct{})} }

func (l *lines) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.all = append(l.all, sc.Text())
		close(l.added)
		l.added = make(chan struct{})
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.ended = true
	close(l.added)
	l.mu.Unlock()
}

func (l *lines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.all, "\n")
}

// waitFor waits until a line from index from on satisfies ok, and returns
// its index; the test fails if the stream ends or the time is up first.
func (l *lines) waitFor(t *testing.T, from int, what string, ok func(string) bool) int {
	t.Helper()
	deadline := time.After(testTimeout)
	for {
		l.mu.Lock()
		for i := from; i < len(l.all); i++ {
			if ok(l.all[i]) {
				l.mu.Unlock()
				return i
			}
		}
		from = max(from, len(l.all))
		added, ended := l.added, l.ended
		l.mu.Unlock()
		if ended {
			t.Fatalf("the output ended without %s:\n%s", what, l.text())
		}
		select {
		case <-added:
		case <-deadline:
			t.Fatalf("no %s within %s:\n%s", what, testTimeout, l.text())
		}
	}
}

// fields reports whether line has every one of want among its
// whitespace-separated fields.
func fields(want ...string) func(string) bool {
	return func(line string) bool {
		fs := strings.Fields(line)
		for _, w := range want {
			found := false
			for _, f := range fs {
				if f == w {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
}

// demo is a running demo agent with its API socket.
type demo struct {
	*process
	socket string
	dir    string
}

// startDemo runs the demo agent with a data directory of its own (and
// args) and waits until its API listens.
func startDemo(t *testing.T, dir string, args ...string) *demo {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	args = append([]string{"run", "--data-dir", dir}, args...)
	d := &demo{process: start(t, nil, "demo", args...), socket: filepath.Join(dir, "api.sock"), dir: dir}
	d.stdout.waitFor(t, 0, "the API listening", func(l string) bool { return strings.Contains(l, "API listening on") })
	return d
}
