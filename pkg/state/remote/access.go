package remote

import (
	"context"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/resgraph/resgraph/pkg/access"
)

// AuthInfo is the gRPC peer information of a connection [Serve]
// authenticated: the connection's subject, the identity its authenticator
// established as the policy sees it. Handlers find it with
// peer.FromContext(ctx).AuthInfo, or with [SubjectOf].
type AuthInfo struct {
	credentials.CommonAuthInfo
	Subject *access.Subject
}

// AuthType names the authentication for gRPC.
func (*AuthInfo) AuthType() string { return "resgraph-access" }

// SubjectOf returns the subject of the connection of a call that [Serve]
// authenticated, or nil (a connection served insecure, or by a gRPC
// server of another making). It allocates nothing.
func SubjectOf(ctx context.Context) *access.Subject {
	if p, ok := peer.FromContext(ctx); ok {
		if info, ok := p.AuthInfo.(*AuthInfo); ok {
			return info.Subject
		}
	}
	return nil
}
