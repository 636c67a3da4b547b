package access

import (
	"strconv"
	"strings"
)

// Transport is how an identity was established.
type Transport uint8

// The transports.
const (
	// Anonymous: nobody was authenticated (an endpoint served insecure,
	// explicitly). No binding but [Anyone] matches it.
	Anonymous Transport = iota
	// UnixPeer: the peer of a unix socket, from the kernel's credentials
	// of the connecting process (SO_PEERCRED).
	UnixPeer
	// Certificate: the peer of a mutual-TLS connection, from its verified
	// client certificate.
	Certificate
	// Process: a caller inside the daemon's process that named itself
	// (an in-process door: Policy.Guard with an identity of its own).
	Process
)

// Identity is who is asking: the peer of a connection as its transport
// established it, or an in-process caller. Identities are values; the
// doors compute one per connection.
type Identity struct {
	Transport Transport
	// UID, GID and PID are a unix peer's user, primary group and process
	// at the time it connected; Groups its supplementary groups (empty
	// when the kernel cannot tell them: SO_PEERGROUPS, Linux 4.13).
	UID, GID uint32
	PID      int32
	Groups   []uint32
	// Subject is a certificate's subject as a distinguished name
	// ("CN=ctl,O=ops"), CommonName and Organizations its parts, and SANs
	// its subject alternative names (DNS names, URIs, e-mail addresses,
	// IP addresses, as text).
	Subject       string
	CommonName    string
	Organizations []string
	SANs          []string
	// Name is an in-process caller's name.
	Name string
}

// String names the identity the way denials and audit records do:
// "uid=1001", `certificate "CN=ctl,O=ops"`, `process "backup"`,
// "anonymous".
func (id *Identity) String() string {
	if id == nil {
		return "none"
	}
	switch id.Transport {
	case UnixPeer:
		return "uid=" + strconv.FormatUint(uint64(id.UID), 10)
	case Certificate:
		return "certificate " + strconv.Quote(id.Subject)
	case Process:
		return "process " + strconv.Quote(id.Name)
	default:
		return "anonymous"
	}
}

// Detail describes the identity in full, for audit records: the unix
// peer's uid, gid and pid, a certificate's subject and names.
func (id *Identity) Detail() string {
	if id == nil || id.Transport != UnixPeer && id.Transport != Certificate {
		return id.String()
	}
	var b strings.Builder
	if id.Transport == UnixPeer {
		b.WriteString("uid=" + strconv.FormatUint(uint64(id.UID), 10) + " gid=" + strconv.FormatUint(uint64(id.GID), 10) +
			" pid=" + strconv.FormatInt(int64(id.PID), 10))
		return b.String()
	}
	b.WriteString("subject=" + strconv.Quote(id.Subject))
	for _, san := range id.SANs {
		b.WriteString(" san=" + strconv.Quote(san))
	}
	return b.String()
}

// inGroup reports whether a unix peer is in group gid (its primary group
// or a supplementary one).
func (id *Identity) inGroup(gid uint32) bool {
	if id.GID == gid {
		return true
	}
	for _, g := range id.Groups {
		if g == gid {
			return true
		}
	}
	return false
}
