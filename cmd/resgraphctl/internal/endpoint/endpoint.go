// Package endpoint finds and dials the daemon resgraphctl talks to: a unix
// socket path or a TCP address, with a default that finds the demo's
// socket.
package endpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// EnvVar is the environment variable that sets the default endpoint.
const EnvVar = "RESGRAPH_ENDPOINT"

// DemoSocket returns the path of the demo's API socket when it runs with
// its default data directory: $XDG_RUNTIME_DIR/resgraph-demo/api.sock,
// or resgraph-demo-UID/api.sock in the temporary directory when
// XDG_RUNTIME_DIR is not set. The demo (cmd/demo) computes its default
// the same way.
func DemoSocket() string {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir != "" {
		dir = filepath.Join(dir, "resgraph-demo")
	} else {
		dir = filepath.Join(os.TempDir(), "resgraph-demo-"+strconv.Itoa(os.Getuid()))
	}
	return filepath.Join(dir, "api.sock")
}

// Default returns the endpoint used without --endpoint: $RESGRAPH_ENDPOINT
// when set, else [DemoSocket].
func Default() string {
	if e := os.Getenv(EnvVar); e != "" {
		return e
	}
	return DemoSocket()
}

// Target returns the gRPC dial target of an endpoint: a unix socket for
// "unix:PATH", "unix://PATH" or a path (it contains a "/"), a TCP address
// for "HOST:PORT" (or "tcp://HOST:PORT"). A relative socket path is made
// absolute.
func Target(e string) (string, error) {
	switch {
	case e == "":
		return "", fmt.Errorf("--endpoint is empty: give a unix socket path or HOST:PORT")
	case strings.HasPrefix(e, "unix://"):
		return unixTarget(strings.TrimPrefix(e, "unix://"))
	case strings.HasPrefix(e, "unix:"):
		return unixTarget(strings.TrimPrefix(e, "unix:"))
	case strings.HasPrefix(e, "tcp://"):
		e = strings.TrimPrefix(e, "tcp://")
	case strings.Contains(e, "/"):
		return unixTarget(e)
	}
	if _, port, ok := strings.Cut(e, ":"); !ok || port == "" || strings.Contains(e, " ") {
		return "", fmt.Errorf("--endpoint %q: want a unix socket path (with a /) or HOST:PORT", e)
	}
	return "passthrough:///" + e, nil
}

func unixTarget(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("--endpoint: empty unix socket path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("--endpoint %s: %w", path, err)
	}
	return "unix://" + abs, nil
}

// Dial returns a connection to the endpoint e. It contacts nobody: the
// first call connects. Without TLS (tc.Enabled false) the connection is
// not encrypted: on a unix socket the daemon knows the caller by its uid
// and gids (the kernel tells it); with TLS (a HOST:PORT only) the caller
// presents its client certificate and verifies the daemon's against the
// CA (mutual TLS).
func Dial(e string, tc TLS) (*grpc.ClientConn, error) {
	target, err := Target(e)
	if err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if tc.Enabled() {
		if strings.HasPrefix(target, "unix://") {
			return nil, fmt.Errorf("--endpoint %s: TLS is for a HOST:PORT endpoint; on a unix socket the daemon knows you by your uid", e)
		}
		cfg, err := tc.config()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, fmt.Errorf("--endpoint %s: %w", e, err)
	}
	return conn, nil
}
