// Package netcut is a network that breaks, for tests: a loopback TCP
// proxy to a backend that can cut every connection it carries and refuse
// new ones until restored (a watch's connection lost and held, then back).
// The remote State's tests and resgraphctl's use it.
package netcut

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy forwards loopback TCP connections to a backend address, and can
// cut every connection it carries and refuse new ones until restored: a
// network that breaks under a watch.
type Proxy struct {
	lis     net.Listener
	backend string
	wg      sync.WaitGroup
	// Accepted counts the connections forwarded.
	Accepted atomic.Int64

	mu    sync.Mutex
	held  bool                  // guarded by mu: new connections are closed at once
	conns map[net.Conn]struct{} // guarded by mu: the open connections, both sides
}

// New starts a proxy to backend, stopped when the test ends.
func New(tb testing.TB, backend string) *Proxy {
	tb.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{lis: lis, backend: backend, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.stop)
	return p
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.lis.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward pipes c to a new connection to the backend until either side
// closes or the proxy cuts them.
func (p *Proxy) forward(c net.Conn) {
	defer p.wg.Done()
	if !p.track(c) {
		return
	}
	p.Accepted.Add(1)
	b, err := net.Dial("tcp", p.backend)
	if err != nil || !p.track(b) {
		p.close(c)
		if err == nil {
			p.close(b)
		}
		return
	}
	var pipes sync.WaitGroup
	pipes.Go(func() { _, _ = io.Copy(b, c); p.close(b); p.close(c) })
	pipes.Go(func() { _, _ = io.Copy(c, b); p.close(b); p.close(c) })
	pipes.Wait()
}

// track records an open connection; while held, it closes it instead.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) close(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

// Cut closes every connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.held = true
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.held = false
	p.mu.Unlock()
}

func (p *Proxy) stop() {
	_ = p.lis.Close()
	p.Cut()
	p.wg.Wait()
}
