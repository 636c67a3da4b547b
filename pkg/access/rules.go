package access

import "context"

// Rules are what a [Policy] is made of: roles, the bindings of roles to
// identities, and rule functions. Load them from a file with [LoadFile]
// or [ReadRules], or write them in Go.
type Rules struct {
	Roles    []Role
	Bindings []Binding
	Funcs    []Func
}

// Role is a named set of grants: verbs over namespaces and types, and
// pages.
type Role struct {
	Name   string
	Grants []Grant
	// Pages are the debug pages and API calls the role may use (see
	// [Page]); "*" grants them all.
	Pages []Page
	pos   string // "file:line: " when loaded from a rule file
}

// Grant allows its verbs on resources of its namespaces and types. A
// namespace or a type is a name, "*" (any), or a pattern with one "*" at
// its start or its end ("*.net.resgraph.dev", "kube-*"); a type may be
// given by an alias of its definition. A sensitive type is reached only
// by a grant that names it (its type or an alias), never by a wildcard or
// a pattern (rule A2).
type Grant struct {
	// Verbs granted; AllVerbs grants every verb.
	Verbs      []Verb
	Namespaces []string
	Types      []string
}

// AllVerbs is every verb, for a [Grant].
var AllVerbs = Verbs

// Binding gives a role to the identities its matches name.
type Binding struct {
	Role string
	To   []Match
	pos  string // "file:line: " when loaded from a rule file
}

// Effect is what a rule function says of an access.
type Effect int8

// The effects. A Deny of any rule function denies the access, whatever
// else allows it; otherwise an Allow of a function or a role's grant
// allows it; otherwise it is denied (deny by default).
const (
	Abstain Effect = iota
	Allow
	Deny
)

// Func is a rule written in Go, for daemons with their own model of who
// may do what. Its function is asked about every access of every subject
// of the policy (before the roles' grants), and returns its effect and,
// for a denial, the reason. It must be safe for concurrent use, quick and
// free of side effects; it runs on every access, so an allocation in it
// is one per access.
type Func struct {
	Name string
	Func func(ctx context.Context, a Access) (Effect, string)
}

// Access is one access to decide: who, which verb, on which resource (ID
// empty for a list or a watch of a whole kind), or which page (Verb zero).
type Access struct {
	Identity  *Identity
	Verb      Verb
	Namespace string
	Type      string
	ID        string
	Page      Page
}
