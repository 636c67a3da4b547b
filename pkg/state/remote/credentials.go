package remote

import (
	"context"
	"errors"
	"net"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/resgraph/resgraph/pkg/access"
)

// authCredentials are the server-side transport credentials of [Serve]:
// each accepted connection is authenticated by an access.Authenticator
// before gRPC speaks on it, and carries its subject in its [AuthInfo].
type authCredentials struct {
	auth    access.Authenticator
	policy  *access.Policy
	timeout time.Duration
}

// grpcProtocols are the application protocols gRPC speaks (TLS's ALPN).
var grpcProtocols = []string{"h2"}

// errClientSide is the answer of credentials that only serve.
var errClientSide = errors.New("remote: Serve's credentials authenticate servers' peers only")

func (c *authCredentials) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	authed, id, err := c.auth.Authenticate(ctx, conn, grpcProtocols)
	if err != nil {
		c.policy.AuditRefused("api", conn.RemoteAddr().Network()+":"+conn.RemoteAddr().String(), err)
		return nil, nil, err
	}
	info := &AuthInfo{
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
		Subject:        c.policy.Subject(id),
	}
	return authed, info, nil
}

func (c *authCredentials) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errClientSide
}

func (c *authCredentials) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "resgraph-access"}
}

func (c *authCredentials) Clone() credentials.TransportCredentials {
	cp := *c
	return &cp
}

// OverrideServerName is deprecated in gRPC and does nothing here.
func (c *authCredentials) OverrideServerName(string) error { return nil }
