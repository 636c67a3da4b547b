package etcdtest

import (
	"net"
	"sync"
)

// Proxy is a TCP proxy on a loopback port that a test can cut, hold and
// restore: cut, it closes every connection it carries and refuses new
// ones (it accepts and closes them at once), as a broken network would,
// while the server keeps running; held, it keeps its connections open but
// forwards nothing, as a network partition that drops every packet would
// (TCP retransmits: what was sent meanwhile arrives, in order, once it is
// restored).
type Proxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	open  *sync.Cond            // signalled when held or cut changes
	cut   bool                  // guarded by mu
	held  bool                  // guarded by mu
	conns map[net.Conn]struct{} // guarded by mu: both ends of every pipe
	wg    sync.WaitGroup        // the accept loop and every pipe
}

// NewProxy starts a proxy to target (host:port).
func NewProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	p.open = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Endpoint returns the proxy's client URL.
func (p *Proxy) Endpoint() string { return "http://" + p.l.Addr().String() }

// Cut closes every connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	p.open.Broadcast()
}

// Hold stops forwarding until Restore, keeping the connections open.
func (p *Proxy) Hold() {
	p.mu.Lock()
	p.held = true
	p.mu.Unlock()
}

// Restore accepts connections again after Cut, and forwards again what
// was held after Hold.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut, p.held = false, false
	p.open.Broadcast()
	p.mu.Unlock()
}

// forwarding waits while the proxy holds its traffic; false once the
// connection was cut.
func (p *Proxy) forwarding(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.held && !p.cut {
		p.open.Wait()
	}
	_, ok := p.conns[c]
	return ok && !p.cut
}

// Close stops the proxy and waits until its goroutines exited.
func (p *Proxy) Close() {
	p.l.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			continue
		}
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

// track registers both ends of a pipe, or closes them when the proxy was
// cut meanwhile.
func (p *Proxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		a.Close()
		b.Close()
		return false
	}
	p.conns[a] = struct{}{}
	p.conns[b] = struct{}{}
	return true
}

// pipe copies from src to dst until either fails, then closes both; what
// it reads while the proxy holds its traffic waits for Restore.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.forwarding(dst) {
				break
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break // any error ends the pipe
		}
	}
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}
