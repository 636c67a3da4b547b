//go:build !linux

package access

import (
	"errors"
	"fmt"
	"net"
)

// PeerIdentity returns the identity of the process at the other end of a
// unix socket connection. It is implemented on Linux only (SO_PEERCRED);
// elsewhere it returns an error matching errors.ErrUnsupported.
func PeerIdentity(conn net.Conn) (Identity, error) {
	return Identity{}, fmt.Errorf("access: peer credentials of %T: %w", conn, errors.ErrUnsupported)
}
