package debugsrv

import (
	"net"
	"net/netip"
	"strconv"

	"github.com/resgraph/resgraph/pkg/state"
)

// CheckAddr checks a "host:port" listen address. The port must be numeric
// (0 picks a free port). Unless allowRemote is set the host must be a
// loopback IP or "localhost"; an empty host (every interface) is refused
// too. Errors are invalid-input errors (state.IsInvalidError).
func CheckAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return state.NewInvalidError(nil, "debug address %q: %w", addr, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return state.NewInvalidError(nil, "debug address %q: port %q is not a number between 0 and 65535", addr, port)
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err == nil && ip.IsLoopback() {
		return nil
	}
	what := "host " + strconv.Quote(host) + " is not a loopback address"
	if host == "" {
		what = "an empty host listens on every interface"
	}
	return state.NewInvalidError(nil, "debug address %q: %s; the debug endpoint exposes profiles and internal state, so it listens on loopback only (127.0.0.1, ::1 or localhost) unless --debug-allow-remote is given", addr, what)
}
