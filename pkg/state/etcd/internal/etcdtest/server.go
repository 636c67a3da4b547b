// Package etcdtest starts real etcd servers for the tests of the etcd
// state: an etcd binary (Debian's etcd-server package, or the one named by
// the RESGRAPH_ETCD environment variable) run as a child process on
// loopback ports, with a data directory of its own, that a test can stop,
// kill, restart and compact.
package etcdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Binary returns the path of the etcd binary: $RESGRAPH_ETCD, else etcd on
// the PATH, else /usr/bin/etcd. It fails with a message that says how to
// install one.
func Binary() (string, error) {
	if p := os.Getenv("RESGRAPH_ETCD"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/etcd"); err == nil {
		return "/usr/bin/etcd", nil
	}
	return "", errors.New("etcdtest: no etcd binary: run scripts/setup (it installs Debian's etcd-server package, as make test does) or set RESGRAPH_ETCD")
}

// TempRoot returns where to put test servers' data: /dev/shm when it is a
// writable directory (etcd syncs every write to disk: memory makes the
// tests fast, and the tests check semantics, not disks), else the
// default temporary directory.
func TempRoot() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// StartTimeout bounds how long Start and Restart wait for the server to
// serve.
const StartTimeout = 30 * time.Second

// Server is an etcd server running as a child process.
type Server struct {
	bin     string
	dir     string
	client  int // client port
	peer    int // peer port
	logPath string
	flags   []string // passed after the server's own

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exited
}

// Start starts a single-member etcd server on free loopback ports with its
// data in dir (which it creates), and waits until it serves. Flags are
// passed to etcd after the server's own, which they override (etcd's
// defaults: "--heartbeat-interval", "100", "--election-timeout", "1000").
func Start(dir string, flags ...string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, client: ports[0], peer: ports[1], logPath: filepath.Join(dir, "etcd.log"), flags: flags}
	if err := s.Restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr returns the host:port of the server's client URL.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.client) }

// Endpoint returns the client URL of the server.
func (s *Server) Endpoint() string { return "http://127.0.0.1:" + strconv.Itoa(s.client) }

// Client returns a new client of the server; the caller closes it.
func (s *Server) Client() (*clientv3.Client, error) { return NewClient(s.Endpoint()) }

// NewClient returns a new client of endpoint (a server's or a proxy's);
// the caller closes it.
func NewClient(endpoint string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
}

// Restart starts the server again (on the same ports, with the same data)
// after Stop or Kill, and waits until it serves.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("etcdtest: server already running")
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	peerURL := "http://127.0.0.1:" + strconv.Itoa(s.peer)
	cmd := exec.Command(s.bin,
		"--name", "test",
		"--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", s.Endpoint(),
		"--advertise-client-urls", s.Endpoint(),
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "test="+peerURL,
		"--initial-cluster-state", "new",
		// A single member elects itself after one election timeout:
		// short ones make starts and restarts fast.
		"--heartbeat-interval", "10",
		"--election-timeout", "50",
		"--snapshot-count", "100000",
		"--logger", "zap",
		"--log-outputs", "stderr",
	)
	cmd.Args = append(cmd.Args, s.flags...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("etcdtest: start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	return s.waitServing(done)
}

// waitServing waits until the server answers a linearizable read.
func (s *Server) waitServing(done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	cli, err := s.Client()
	if err != nil {
		return err
	}
	defer cli.Close()
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		_, err := cli.Get(rctx, "health")
		rcancel()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			log, _ := os.ReadFile(s.logPath)
			return fmt.Errorf("etcdtest: etcd exited at start: %s", tail(log, 2000))
		case <-ctx.Done():
			return fmt.Errorf("etcdtest: etcd did not serve within %s: %w", StartTimeout, err)
		case <-time.After(20 * time.Millisecond): // poll interval of a readiness probe
		}
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Stop stops the server gracefully and waits until it exited.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

// Kill kills the server (SIGKILL) and waits until it exited.
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(sig)
	<-s.done
	s.cmd, s.done = nil, nil
}

// Close kills the server and removes its data.
func (s *Server) Close() {
	s.Kill()
	_ = os.RemoveAll(s.dir)
}

// freePorts returns n distinct free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
