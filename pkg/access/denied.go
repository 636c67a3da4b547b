package access

import (
	"strings"

	"github.com/resgraph/resgraph/pkg/internal/errclass"
)

// ErrDenied is the marker of the access-denied class: an access the rules
// did not allow. [*DeniedError] belongs to it, and so does the remote
// client's error for a PermissionDenied status.
type ErrDenied interface{ AccessDeniedError() }

// IsDeniedError reports whether err is (or wraps) an error of the
// access-denied class.
func IsDeniedError(err error) bool { return errclass.Is[ErrDenied](err) }

// DeniedError is a denied access (rule A4): its message names the
// identity, the verb (or the page) and the resource, and why — no role
// granted it, a sensitive type not granted by name, or the rule function
// that denied it:
//
//	denied: identity uid=1001 has no role granting update on LinkSpecs(network) (resource eth0)
//	denied: identity uid=1001 has no role granting get on Secrets(vault) by name (resource k1): the type is sensitive, and only a grant naming it reaches it
//	denied: identity uid=1001: function tenants denies update on LinkSpecs(network) (resource eth0): not your tenant
//	denied: identity uid=1001 has no role granting the pprof pages
//	denied: identity uid=4242 has no role
//	denied: identity uid=1001: no page grants the call /pkg.Service/Method
//
// The remote State serves it as a PermissionDenied status with this
// message.
type DeniedError struct {
	// Identity names who asked ([Identity.String]).
	Identity string
	Verb     Verb
	Page     Page
	// Namespace, Type and ID name the resource (ID empty for a kind).
	Namespace, Type, ID string
	// Rule is the rule function that denied, empty for a denial by
	// default; Reason its reason.
	Rule, Reason string
	// Hidden marks a sensitive type a grant would reach if it named it.
	Hidden bool
	// Call is a call of a door that no page grants.
	Call string
}

// AccessDeniedError marks the access-denied class.
func (*DeniedError) AccessDeniedError() {}

func newDenied(a *Access, d Decision) *DeniedError {
	return &DeniedError{Identity: a.Identity.String(), Verb: a.Verb, Page: a.Page, Namespace: a.Namespace, Type: a.Type, ID: a.ID,
		Rule: d.Rule, Reason: d.Reason, Hidden: d.Hidden}
}

// Error returns the denial's message (see the type's documentation).
func (e *DeniedError) Error() string {
	var b strings.Builder
	b.WriteString("denied: identity " + e.Identity)
	what := e.Verb.String() + " on " + e.Resource()
	switch {
	case e.Call != "":
		b.WriteString(": no page grants the call " + e.Call)
		return b.String()
	case e.Type == "" && e.Page == "":
		b.WriteString(" has no role")
	case e.Rule != "":
		if e.Page != "" {
			what = "the " + string(e.Page) + " pages"
		}
		b.WriteString(": " + e.Rule + " denies " + what)
	case e.Page != "":
		b.WriteString(" has no role granting the " + string(e.Page) + " pages")
	default:
		b.WriteString(" has no role granting " + what)
		if e.Hidden {
			b.WriteString(" by name")
		}
	}
	if e.ID != "" && e.Page == "" {
		b.WriteString(" (resource " + e.ID + ")")
	}
	switch {
	case e.Rule != "" && e.Reason != "":
		b.WriteString(": " + e.Reason)
	case e.Hidden:
		b.WriteString(": the type is sensitive, and only a grant naming it reaches it")
	}
	return b.String()
}

// Resource names the resource's kind as "Type(namespace)".
func (e *DeniedError) Resource() string { return e.Type + "(" + e.Namespace + ")" }
