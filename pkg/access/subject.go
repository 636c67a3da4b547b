package access

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/state"
)

// Subject is an identity as a policy sees it: the identity and the roles
// bound to it. The doors make one per connection (or per in-process
// caller) and decide every access of that connection with it. A Subject
// is safe for concurrent use.
type Subject struct {
	id    Identity
	p     *Policy
	roles []*role
	// guard caches the guarded state of the last state Guard was given,
	// so that a door that serves one state allocates it once.
	guard atomic.Pointer[guarded]
}

// Subject returns the subject of id: the roles of every binding that
// matches it. An identity no binding matches has no role: every access of
// its is denied (unless a rule function allows it).
func (p *Policy) Subject(id Identity) *Subject {
	s := &Subject{id: id, p: p}
	for _, b := range p.bindings {
		if slices.ContainsFunc(b.to, func(m Match) bool { return m.Matches(&s.id) }) && !slices.Contains(s.roles, b.role) {
			s.roles = append(s.roles, b.role)
		}
	}
	return s
}

// Identity returns the subject's identity.
func (s *Subject) Identity() Identity { return s.id }

// Roles returns the names of the roles bound to the subject.
func (s *Subject) Roles() []string {
	out := make([]string, len(s.roles))
	for i, r := range s.roles {
		out[i] = r.name
	}
	return out
}

// Bound reports whether any rule could allow the subject anything: a role
// is bound to it, or the policy has rule functions. The doors refuse
// questions about the state as a whole (its revision, its definitions) to
// a subject that is not bound.
func (s *Subject) Bound() bool { return len(s.roles) > 0 || len(s.p.funcs) > 0 }

// Decision is the outcome of one access.
type Decision struct {
	Allowed bool
	// Rule names what decided: "role NAME" or "function NAME"; empty for
	// a denial by default (no rule allowed the access).
	Rule string
	// Reason is a rule function's reason for a denial.
	Reason string
	// Hidden marks a denial of a sensitive type that a grant would have
	// reached, had it named the type (rule A2).
	Hidden bool
}

// Decide decides the access of the subject to a resource (id empty for a
// list or a watch of the whole kind). It allocates nothing unless a rule
// function does (rule A6).
func (s *Subject) Decide(ctx context.Context, verb Verb, ns, typ, id string) Decision {
	return s.decide(ctx, &Access{Identity: &s.id, Verb: verb, Namespace: ns, Type: typ, ID: id})
}

// DecidePage decides the access of the subject to a page.
func (s *Subject) DecidePage(ctx context.Context, page Page) Decision {
	return s.decide(ctx, &Access{Identity: &s.id, Page: page})
}

func (s *Subject) decide(ctx context.Context, a *Access) Decision {
	allowedBy := ""
	for i := range s.p.funcs {
		f := &s.p.funcs[i]
		switch eff, reason := f.fn(ctx, *a); eff {
		case Deny:
			return Decision{Rule: f.rule, Reason: reason}
		case Allow:
			if allowedBy == "" {
				allowedBy = f.rule
			}
		}
	}
	if allowedBy != "" {
		return Decision{Allowed: true, Rule: allowedBy}
	}
	if a.Page != "" {
		for _, r := range s.roles {
			if r.all || slices.Contains(r.pages, a.Page) {
				return Decision{Allowed: true, Rule: r.rule}
			}
		}
		return Decision{}
	}
	sensitive := s.p.defs.Sensitive(a.Type)
	hidden := false
	for _, r := range s.roles {
		for i := range r.gs {
			g := &r.gs[i]
			if !g.verbs.has(a.Verb) || !g.ns.match(a.Namespace, false) {
				continue
			}
			if g.types.match(a.Type, sensitive) {
				return Decision{Allowed: true, Rule: r.rule}
			}
			hidden = hidden || sensitive && g.types.match(a.Type, false)
		}
	}
	return Decision{Hidden: hidden}
}

// Visible reports whether the subject may see resources of type typ in
// namespace ns in explanations and the trace (rule A2): every type that is
// not sensitive, and a sensitive one when the subject may get its
// resources there (a grant naming it, or a rule function).
func (s *Subject) Visible(ctx context.Context, ns, typ string) bool {
	if !s.p.defs.Sensitive(typ) {
		return true
	}
	return s.decide(ctx, &Access{Identity: &s.id, Verb: Get, Namespace: ns, Type: typ}).Allowed
}

// Guard returns st as the subject may use it (see [Policy.Guard]). The
// state of the last st given is kept, so that a door serving one state
// allocates it once per subject.
func (s *Subject) Guard(st state.State) state.State {
	if g := s.guard.Load(); g != nil && g.comparable && g.core.inner == st {
		return g
	}
	g := newGuarded(st, s)
	s.guard.Store(g)
	return g
}
