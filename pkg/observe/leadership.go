package observe

import (
	"fmt"
	"time"
)

// Role is a controller's part in its election when the Runtime runs with
// leadership (runtime.WithLeadership): it runs in the replica that leads
// the election, and is a standby in the others.
type Role uint8

// Roles, in JSON as their String form.
const (
	// RoleStandby: another replica runs the controller (or none does
	// yet: this one campaigns); this one keeps its inputs watched.
	RoleStandby Role = iota
	// RoleLeader: this replica runs the controller, its writes fenced by
	// the term it leads.
	RoleLeader
)

var roleNames = [...]string{"standby", "leader"}

// String returns "standby" or "leader".
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// MarshalText returns the String form.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText parses the String form of a known role.
func (r *Role) UnmarshalText(b []byte) error {
	for i, n := range roleNames {
		if n == string(b) {
			*r = Role(i)
			return nil
		}
	}
	return fmt.Errorf("observe: unknown leadership role %q", b)
}

// Leadership is a controller's part in its election (see
// [ControllerStatus].Leadership): its Role since when, the Election, and
// Term, the number of the term it leads (while standby: of the last term
// it led in this replica; 0 if none). Terms of an election number upward.
type Leadership struct {
	Election string    `json:"election"`
	Role     Role      `json:"role"`
	Since    time.Time `json:"since,omitzero"`
	Term     uint64    `json:"term,omitempty"`
}

// String says "leader of election E since T (term N)" or "standby in
// election E since T".
func (l *Leadership) String() string {
	if l.Role == RoleLeader {
		return fmt.Sprintf("leader of election %s since %s (term %d)", l.Election, l.Since.Format(time.RFC3339), l.Term)
	}
	return fmt.Sprintf("standby in election %s since %s", l.Election, l.Since.Format(time.RFC3339))
}
