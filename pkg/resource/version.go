package resource

import (
	"fmt"
	"strconv"
)

// Version is the version of a stored resource: undefined (never stored) or a
// positive integer that the state increments on every write.
type Version struct {
	v uint64 // 0 means undefined
}

// VersionUndefined is the version of a resource that was never stored.
var VersionUndefined = Version{}

// NewVersion returns the version v; NewVersion(0) is [VersionUndefined].
func NewVersion(v uint64) Version { return Version{v: v} }

// Value returns the version as an integer, 0 when undefined.
func (v Version) Value() uint64 { return v.v }

// Next returns the version that follows v; VersionUndefined.Next() is 1.
func (v Version) Next() Version { return Version{v: v.v + 1} }

// Equal reports whether v and o are the same version.
func (v Version) Equal(o Version) bool { return v.v == o.v }

// String returns "undefined" or the version in decimal.
func (v Version) String() string {
	if v.v == 0 {
		return "undefined"
	}
	return strconv.FormatUint(v.v, 10)
}

// ParseVersion parses the output of [Version.String]: "undefined" or a
// positive decimal integer.
func ParseVersion(s string) (Version, error) {
	if s == "undefined" {
		return VersionUndefined, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return VersionUndefined, fmt.Errorf("parse version %q: %w", s, err)
	}
	if n == 0 {
		return VersionUndefined, fmt.Errorf("parse version %q: a defined version is >= 1", s)
	}
	return Version{v: n}, nil
}

// Phase is the lifecycle phase of a resource.
type Phase int

const (
	// PhaseRunning is the phase of a live resource.
	PhaseRunning Phase = iota
	// PhaseTearingDown is the phase of a resource that is going away: it is
	// destroyed once its finalizers are empty.
	PhaseTearingDown
)

// String returns "running" or "tearingDown".
func (p Phase) String() string {
	switch p {
	case PhaseRunning:
		return "running"
	case PhaseTearingDown:
		return "tearingDown"
	default:
		return "Phase(" + strconv.Itoa(int(p)) + ")"
	}
}
