package access

import (
	"encoding/binary"
	"fmt"
	"net"
	"syscall"
	"unsafe"
)

// soPeerGroups is Linux's SO_PEERGROUPS (since 4.13), which the syscall
// package does not name.
const soPeerGroups = 59

// PeerIdentity returns the identity of the process at the other end of a
// unix socket connection: the uid, gid and pid the kernel recorded when it
// connected (SO_PEERCRED), and its supplementary groups when the kernel
// tells them (SO_PEERGROUPS). conn must be a unix socket connection (a
// *net.UnixConn, or a connection with a SyscallConn of one).
//
// The standard library's syscall package reads SO_PEERCRED
// (GetsockoptUcred); SO_PEERGROUPS is read with a raw getsockopt, so no
// other module is needed.
func PeerIdentity(conn net.Conn) (Identity, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok || conn.LocalAddr() == nil || conn.LocalAddr().Network() != "unix" {
		return Identity{}, fmt.Errorf("access: peer credentials: %T is not a unix socket connection", conn)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return Identity{}, fmt.Errorf("access: peer credentials: %w", err)
	}
	var id Identity
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		var cred *syscall.Ucred
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		if credErr == nil {
			id = Identity{Transport: UnixPeer, UID: cred.Uid, GID: cred.Gid, PID: cred.Pid, Groups: peerGroups(fd)}
		}
	}); err != nil {
		return Identity{}, fmt.Errorf("access: peer credentials: %w", err)
	}
	if credErr != nil {
		return Identity{}, fmt.Errorf("access: peer credentials (SO_PEERCRED): %w", credErr)
	}
	return id, nil
}

// peerGroups returns the supplementary groups of a unix socket's peer, or
// nil when the kernel does not tell them.
func peerGroups(fd uintptr) []uint32 {
	buf := make([]byte, 64*4)
	for {
		n := uint32(len(buf))
		_, _, errno := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.SOL_SOCKET, soPeerGroups,
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
		switch {
		case errno == syscall.ERANGE && int(n) > len(buf) && n <= 65536*4:
			buf = make([]byte, n)
			continue
		case errno != 0:
			return nil
		}
		groups := make([]uint32, 0, n/4)
		for i := 0; i+4 <= int(n); i += 4 {
			groups = append(groups, binary.NativeEndian.Uint32(buf[i:]))
		}
		return groups
	}
}
