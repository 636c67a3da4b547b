package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state"
)

// TestA1_DebugFlagsRefuseADoorWithoutALock: a --debug-addr without TLS
// is refused unless --debug-insecure (loopback) or --debug-allow-remote
// (any address) consents to serving it unauthenticated; TLS files that
// do not make a whole mutual TLS, or that name no TCP address (a unix
// socket is authenticated by peer credentials), are refused, each with
// an error naming the flags.
func TestA1_DebugFlagsRefuseADoorWithoutALock(t *testing.T) {
	tlsFlags := []string{"--debug-cert", "c.pem", "--debug-key", "k.pem", "--debug-client-ca", "ca.pem"}
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"loopback without TLS":      {[]string{"--debug-addr", "127.0.0.1:0"}, "--debug-insecure to serve them without authentication"},
		"remote without TLS":        {[]string{"--debug-addr", "0.0.0.0:0", "--debug-insecure"}, "--debug-allow-remote"},
		"a cert without a key":      {[]string{"--debug-addr", "127.0.0.1:0", "--debug-cert", "c.pem", "--debug-client-ca", "ca.pem"}, "give --debug-cert, --debug-key and --debug-client-ca"},
		"TLS on a unix socket":      {append([]string{"--debug-socket", "/tmp/d.sock"}, tlsFlags...), "are for --debug-addr, which is not given"},
		"a socket as the TCP addr":  {append([]string{"--debug-addr", "/tmp/d.sock"}, tlsFlags...), "a unix socket is --debug-socket"},
		"TLS and insecure":          {append([]string{"--debug-addr", "127.0.0.1:0", "--debug-insecure"}, tlsFlags...), "choose one"},
		"insecure without an addr":  {[]string{"--debug-insecure"}, "are for --debug-addr"},
		"TLS without a data dir":    {append([]string{"--debug-addr", "127.0.0.1:0", "--data-dir", ""}, tlsFlags...), "--data-dir is empty"},
		"a TLS addr without a port": {append([]string{"--debug-addr", "0.0.0.0"}, tlsFlags...), "missing port"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := parse(t, tt.args...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, _, err := parse(t, "--debug-addr", "127.0.0.1:0")
	assert.True(t, state.IsInvalidError(err), "an unauthenticated debug address is an invalid-input error: %v", err)

	for _, ok := range [][]string{
		{"--debug-addr", "127.0.0.1:0", "--debug-insecure"},
		{"--debug-addr", "0.0.0.0:0", "--debug-allow-remote"},
		append([]string{"--debug-addr", "0.0.0.0:0"}, tlsFlags...), // mutual TLS: any address
		{"--debug-socket", "/tmp/d.sock"},
	} {
		c, _, err := parse(t, ok...)
		require.NoError(t, err, ok)
		assert.NotEqual(t, DebugOptions{}, c.Run.Debug)
	}
	c, _, err := parse(t, append([]string{"--debug-socket", "/tmp/d.sock", "--debug-addr", "[::]:6060"}, tlsFlags...)...)
	require.NoError(t, err)
	assert.Equal(t, DebugOptions{Socket: "/tmp/d.sock", Addr: "[::]:6060", Cert: "c.pem", Key: "k.pem", ClientCA: "ca.pem"}, c.Run.Debug)
	assert.True(t, c.Run.Debug.Authenticated())
}

// TestExplainDoors: explain reaches a unix socket (an address with a
// "/") or HOST:PORT, with mutual TLS given whole; TLS files on a socket
// are refused.
func TestExplainDoors(t *testing.T) {
	c, _, err := parse(t, "explain", "--addr", "/run/d.sock", "controller", "A")
	require.NoError(t, err)
	assert.True(t, c.Explain.Socket())
	tlsFlags := []string{"--client-certificate", "c.pem", "--client-key", "k.pem", "--certificate-authority", "ca.pem"}
	c, _, err = parse(t, append(append([]string{"explain", "--addr", "127.0.0.1:1"}, tlsFlags...), "controller", "A")...)
	require.NoError(t, err)
	assert.Equal(t, ExplainOptions{Addr: "127.0.0.1:1", Cert: "c.pem", Key: "k.pem", CA: "ca.pem", Controller: "A", Timeout: c.Explain.Timeout}, c.Explain)
	_, _, err = parse(t, append(append([]string{"explain", "--addr", "/run/d.sock"}, tlsFlags...), "controller", "A")...)
	assert.ErrorContains(t, err, "is a unix socket, authenticated by your uid")
	_, _, err = parse(t, "explain", "--addr", "127.0.0.1:1", "--client-certificate", "c.pem", "controller", "A")
	assert.ErrorContains(t, err, "mutual TLS needs --client-certificate, --client-key and --certificate-authority")
}
