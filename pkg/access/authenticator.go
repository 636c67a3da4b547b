package access

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
)

// Authenticator establishes who is at the other end of a connection a
// daemon accepted (rule A1: no identity, no access). The doors of a daemon
// (its API listener, its debug endpoint) authenticate every connection
// with one before anything is served on it.
type Authenticator interface {
	// Authenticate returns the connection to serve the peer on (for
	// mutual TLS, the TLS connection over conn) and the peer's identity,
	// or an error when the peer cannot be authenticated: the door then
	// closes conn. protocols are the application protocols the door
	// speaks, for TLS's ALPN ("h2" for gRPC). ctx bounds the handshake.
	Authenticate(ctx context.Context, conn net.Conn, protocols []string) (net.Conn, Identity, error)
	// String describes the authenticator for logs.
	String() string
}

// PeerCredentials returns the authenticator of unix socket connections:
// the identity is the connecting process's uid, gid, groups and pid as the
// kernel recorded them ([PeerIdentity]). A connection of another network
// is refused.
func PeerCredentials() Authenticator { return peerCredentials{} }

type peerCredentials struct{}

func (peerCredentials) Authenticate(_ context.Context, conn net.Conn, _ []string) (net.Conn, Identity, error) {
	id, err := PeerIdentity(conn)
	return conn, id, err
}

func (peerCredentials) String() string { return "unix peer credentials" }

// MutualTLS returns the authenticator of mutual-TLS connections: the
// server's TLS configuration cfg must require and verify client
// certificates against its client CAs ([CheckMutualTLS]), and the identity
// is the verified client certificate's ([CertificateIdentity]). An expired
// certificate, one signed by another CA, or none, fails the handshake.
// cfg is cloned; the door's protocols are offered in ALPN unless cfg names
// its own.
func MutualTLS(cfg *tls.Config) (Authenticator, error) {
	if err := CheckMutualTLS(cfg); err != nil {
		return nil, err
	}
	return &mutualTLS{cfg: cfg.Clone()}, nil
}

type mutualTLS struct{ cfg *tls.Config }

func (m *mutualTLS) Authenticate(ctx context.Context, conn net.Conn, protocols []string) (net.Conn, Identity, error) {
	cfg := m.cfg
	if len(cfg.NextProtos) == 0 && len(protocols) > 0 {
		cfg = cfg.Clone()
		cfg.NextProtos = slices.Clone(protocols)
	}
	tc := tls.Server(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, Identity{}, fmt.Errorf("access: mutual TLS handshake with %v: %w", conn.RemoteAddr(), err)
	}
	id, err := ConnectionIdentity(tc.ConnectionState())
	if err != nil {
		return nil, Identity{}, err
	}
	return tc, id, nil
}

func (m *mutualTLS) String() string { return "mutual TLS" }
