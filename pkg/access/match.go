package access

import (
	"slices"
	"strconv"
)

// Match is one identity a binding binds its role to (see [Binding]):
// a unix user or group, a certificate's subject, common name,
// organization or subject alternative name, an in-process caller's name,
// or anyone authenticated. Make one with the functions below.
type Match struct {
	field matchField
	value string
	num   uint32
}

type matchField uint8

const (
	matchNone matchField = iota
	matchUID
	matchGID
	matchSubject
	matchCommonName
	matchOrganization
	matchSAN
	matchProcess
	matchAnyone
)

// UID matches the unix peer whose user is uid.
func UID(uid uint32) Match { return Match{field: matchUID, num: uid} }

// GID matches a unix peer in group gid (its primary group or a
// supplementary one).
func GID(gid uint32) Match { return Match{field: matchGID, num: gid} }

// CertSubject matches the client certificate whose subject is dn, as
// [Identity.Subject] writes it ("CN=ctl,O=ops").
func CertSubject(dn string) Match { return Match{field: matchSubject, value: dn} }

// CertCommonName matches the client certificate whose subject's common
// name is cn.
func CertCommonName(cn string) Match { return Match{field: matchCommonName, value: cn} }

// CertOrganization matches a client certificate with organization o in its
// subject (a group of certificates, as Kubernetes reads O).
func CertOrganization(o string) Match { return Match{field: matchOrganization, value: o} }

// CertSAN matches a client certificate with the subject alternative name
// san (a DNS name, URI, e-mail address or IP address).
func CertSAN(san string) Match { return Match{field: matchSAN, value: san} }

// ProcessName matches the in-process caller named name.
func ProcessName(name string) Match { return Match{field: matchProcess, value: name} }

// Anyone matches every identity, anonymous ones included.
func Anyone() Match { return Match{field: matchAnyone} }

// Matches reports whether id is the identity m names.
func (m Match) Matches(id *Identity) bool {
	switch m.field {
	case matchAnyone:
		return true
	case matchUID:
		return id.Transport == UnixPeer && id.UID == m.num
	case matchGID:
		return id.Transport == UnixPeer && id.inGroup(m.num)
	case matchSubject:
		return id.Transport == Certificate && id.Subject == m.value
	case matchCommonName:
		return id.Transport == Certificate && id.CommonName == m.value
	case matchOrganization:
		return id.Transport == Certificate && slices.Contains(id.Organizations, m.value)
	case matchSAN:
		return id.Transport == Certificate && slices.Contains(id.SANs, m.value)
	case matchProcess:
		return id.Transport == Process && id.Name == m.value
	}
	return false
}

// String describes the match as a rule file writes it ("uid: 1001").
func (m Match) String() string {
	switch m.field {
	case matchUID:
		return "uid: " + strconv.FormatUint(uint64(m.num), 10)
	case matchGID:
		return "gid: " + strconv.FormatUint(uint64(m.num), 10)
	case matchSubject:
		return "subject: " + strconv.Quote(m.value)
	case matchCommonName:
		return "commonName: " + strconv.Quote(m.value)
	case matchOrganization:
		return "organization: " + strconv.Quote(m.value)
	case matchSAN:
		return "san: " + strconv.Quote(m.value)
	case matchProcess:
		return "process: " + strconv.Quote(m.value)
	case matchAnyone:
		return "anyone: true"
	}
	return "nothing"
}
