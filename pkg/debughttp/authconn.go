package debughttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/resgraph/resgraph/pkg/access"
)

// authListener hands out connections that authenticate their peer with
// the authenticator before the first byte is read or written. The
// handshake runs on the goroutine the HTTP server gives the connection,
// so a slow or silent peer holds up nobody else.
type authListener struct {
	net.Listener
	auth    access.Authenticator
	policy  *access.Policy
	timeout time.Duration
}

// httpProtocols are what the debug server speaks (TLS's ALPN).
var httpProtocols = []string{"http/1.1"}

func (l *authListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &authConn{Conn: c, l: l}, nil
}

// authConn is an accepted connection, authenticated on first use. Conn is
// the raw connection: closing it (and its deadlines) ends a handshake
// too.
type authConn struct {
	net.Conn
	l    *authListener
	once sync.Once
	// Set once by handshake: the connection to serve on and its subject,
	// or why the peer was refused.
	conn net.Conn
	sub  *access.Subject
	err  error
}

func (c *authConn) handshake() error {
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.l.timeout)
		defer cancel()
		conn, id, err := c.l.auth.Authenticate(ctx, c.Conn, httpProtocols)
		if err != nil {
			c.err = err
			c.l.policy.AuditRefused("debug", c.RemoteAddr().Network()+":"+c.RemoteAddr().String(), err)
			return
		}
		c.conn, c.sub = conn, c.l.policy.Subject(id)
	})
	return c.err
}

func (c *authConn) Read(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.conn.Read(b)
}

func (c *authConn) Write(b []byte) (int, error) {
	if err := c.handshake(); err != nil {
		return 0, err
	}
	return c.conn.Write(b)
}

type authConnKey struct{}

// connContext gives a request's context its connection (http.Server's
// ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if ac, ok := c.(*authConn); ok {
		return context.WithValue(ctx, authConnKey{}, ac)
	}
	return ctx
}

// subjectHandler puts the subject of a request's connection in its
// context (access.FromContext) before handing it to h.
type subjectHandler struct{ h http.Handler }

func (s subjectHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ac, _ := r.Context().Value(authConnKey{}).(*authConn)
	if ac == nil || ac.sub == nil {
		http.Error(w, "denied: the connection has no identity", http.StatusForbidden)
		return
	}
	s.h.ServeHTTP(w, r.WithContext(access.NewContext(r.Context(), ac.sub)))
}
