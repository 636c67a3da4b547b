package access_test

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/internal/certtest"
	"github.com/resgraph/resgraph/pkg/access"
)

// accept authenticates the first connection of lis with auth and sends
// its outcome.
func accept(lis net.Listener, auth access.Authenticator) <-chan authResult {
	out := make(chan authResult, 1)
	go func() {
		conn, err := lis.Accept()
		if err != nil {
			out <- authResult{err: err}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, id, err := auth.Authenticate(ctx, conn, []string{"test"})
		if c != nil {
			_ = c.Close()
		} else {
			_ = conn.Close()
		}
		out <- authResult{id: id, err: err}
	}()
	return out
}

type authResult struct {
	id  access.Identity
	err error
}

// TestA1_UnixPeerCredentials: over a unix socket the identity is the
// connecting process's, from the kernel: our uid, gid and pid.
func TestA1_UnixPeerCredentials(t *testing.T) {
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "s.sock"))
	require.NoError(t, err)
	defer lis.Close()
	got := accept(lis, access.PeerCredentials())
	conn, err := net.Dial("unix", lis.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	res := <-got
	require.NoError(t, res.err)
	assert.Equal(t, access.UnixPeer, res.id.Transport)
	assert.Equal(t, uint32(os.Getuid()), res.id.UID)
	assert.Equal(t, uint32(os.Getgid()), res.id.GID)
	assert.Equal(t, int32(os.Getpid()), res.id.PID)
	groups, err := os.Getgroups()
	require.NoError(t, err)
	for _, g := range groups {
		assert.Contains(t, append(res.id.Groups, res.id.GID), uint32(g))
	}
	assert.Equal(t, "uid="+strconv.Itoa(os.Getuid()), res.id.String())

	// A TCP connection has no peer credentials: refused.
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	got = accept(tcp, access.PeerCredentials())
	c2, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer c2.Close()
	assert.ErrorContains(t, (<-got).err, "not a unix socket connection")
}

// TestA1_MutualTLSIdentities: over TCP the identity is the verified
// client certificate's; a client without one, with an expired one or one
// of another CA fails the handshake.
func TestA1_MutualTLSIdentities(t *testing.T) {
	ca, err := certtest.NewCA("test CA")
	require.NoError(t, err)
	other, err := certtest.NewCA("another CA")
	require.NoError(t, err)
	srvCfg, err := ca.ServerConfig()
	require.NoError(t, err)
	auth, err := access.MutualTLS(srvCfg)
	require.NoError(t, err)
	good, err := ca.Issue(certtest.Leaf{CommonName: "ctl", Organizations: []string{"ops"}, DNSNames: []string{"ctl.example"}, URIs: []string{"spiffe://example/ctl"}})
	require.NoError(t, err)
	expired, err := ca.Issue(certtest.Leaf{CommonName: "old", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	foreign, err := other.Issue(certtest.Leaf{CommonName: "ctl", Organizations: []string{"ops"}})
	require.NoError(t, err)

	handshake := func(cert tls.Certificate) (authResult, error) {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer lis.Close()
		got := accept(lis, auth)
		conn, err := tls.Dial("tcp", lis.Addr().String(), ca.ClientConfig(cert))
		if err == nil {
			// TLS 1.3: the server's verdict on the client's certificate
			// arrives with the first read.
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.Read(make([]byte, 1))
			_ = conn.Close()
		}
		return <-got, err
	}
	res, _ := handshake(good)
	require.NoError(t, res.err)
	assert.Equal(t, access.Identity{Transport: access.Certificate, Subject: "CN=ctl,O=ops", CommonName: "ctl", Organizations: []string{"ops"},
		SANs: []string{"ctl.example", "spiffe://example/ctl"}}, res.id)
	for name, cert := range map[string]tls.Certificate{"none": {}, "expired": expired, "foreign": foreign} {
		res, clientErr := handshake(cert)
		assert.Error(t, res.err, name)
		assert.Error(t, clientErr, name)
		assert.Equal(t, access.Identity{}, res.id, name)
	}
}

// TestA1_MutualTLSConfigurationChecked: a configuration that would let a
// client in without a verified certificate is refused.
func TestA1_MutualTLSConfigurationChecked(t *testing.T) {
	ca, err := certtest.NewCA("test CA")
	require.NoError(t, err)
	cfg, err := ca.ServerConfig()
	require.NoError(t, err)
	for name, mutate := range map[string]func(*tls.Config){
		"optional client certificates": func(c *tls.Config) { c.ClientAuth = tls.VerifyClientCertIfGiven },
		"no client CAs":                func(c *tls.Config) { c.ClientCAs = nil },
		"no server certificate":        func(c *tls.Config) { c.Certificates = nil },
	} {
		c := cfg.Clone()
		mutate(c)
		_, err := access.MutualTLS(c)
		assert.Error(t, err, name)
	}
	_, err = access.MutualTLS(nil)
	assert.Error(t, err)
}
