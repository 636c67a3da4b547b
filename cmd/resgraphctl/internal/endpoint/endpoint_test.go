package endpoint_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/endpoint"
)

func TestTarget_SocketsAndAddresses(t *testing.T) {
	abs, err := filepath.Abs("rel/api.sock")
	require.NoError(t, err)
	for in, want := range map[string]string{
		"/run/d/api.sock":        "unix:///run/d/api.sock",
		"unix:///run/d/api.sock": "unix:///run/d/api.sock",
		"unix:/run/d/api.sock":   "unix:///run/d/api.sock",
		"rel/api.sock":           "unix://" + abs,
		"127.0.0.1:50000":        "passthrough:///127.0.0.1:50000",
		"tcp://localhost:7":      "passthrough:///localhost:7",
		"[::1]:7":                "passthrough:///[::1]:7",
	} {
		got, err := endpoint.Target(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "localhost", "host:", "unix:", "a b:1"} {
		_, err := endpoint.Target(bad)
		assert.Error(t, err, bad)
	}
}

func TestDefault_FindsTheDemosSocket(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	t.Setenv(endpoint.EnvVar, "")
	assert.Equal(t, "/run/user/7/resgraph-demo/api.sock", endpoint.Default())
	t.Setenv(endpoint.EnvVar, "127.0.0.1:9")
	assert.Equal(t, "127.0.0.1:9", endpoint.Default())
}
