package access

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// Policy decides accesses: the roles of [Rules], compiled, bound to
// identities, with their rule functions and the audit log every door
// writes to. One policy is handed to every door of a daemon (its API
// listener, its debug endpoint, in-process callers); it is immutable and
// safe for concurrent use.
type Policy struct {
	defs     *definition.Registry
	roles    []*role
	bindings []binding
	funcs    []compiledFunc
	audit    *auditor
	warnings []string
}

type role struct {
	name  string
	rule  string // "role NAME": what audit records and denials name
	pos   string // "file:line: " of its definition, when loaded from a file
	gs    []grant
	pages []Page
	all   bool // every page
	bound bool
}

type grant struct {
	verbs verbSet
	ns    pattern
	types pattern
}

type binding struct {
	role *role
	to   []Match
}

type compiledFunc struct {
	rule string
	fn   func(context.Context, Access) (Effect, string)
}

// PolicyOption configures [NewPolicy].
type PolicyOption func(*policyOptions)

type policyOptions struct {
	logger *zap.Logger
	audit  *zap.Logger
	sample uint64
	pages  []Page
}

// WithLogger sets the logger of the policy's warnings, logged once when it
// is made (rule A5: a role bound to nothing, a type no rule reaches).
func WithLogger(l *zap.Logger) PolicyOption { return func(o *policyOptions) { o.logger = l } }

// WithAudit sets the audit log (rule A3): one record per write, per
// denial, and per sampled read (see [WithReadSampling]). Without it the
// policy audits nothing.
func WithAudit(l *zap.Logger) PolicyOption { return func(o *policyOptions) { o.audit = l } }

// WithReadSampling audits one allowed read in every n (get, list, watch,
// pages); 0 (the default) audits none, 1 every one.
func WithReadSampling(n uint64) PolicyOption { return func(o *policyOptions) { o.sample = n } }

// WithPages names pages beyond [BuiltinPages] that roles may grant (a
// daemon's own debug pages).
func WithPages(pages ...Page) PolicyOption {
	return func(o *policyOptions) { o.pages = append(o.pages, pages...) }
}

// NewPolicy compiles rules over the types defs defines. It refuses rules
// that name an unknown type (neither a type of defs nor an alias of one),
// an unknown verb or page, a role twice, a binding of an unknown role or
// of nothing, a rule function without a name or a function; nothing is
// then decided. A role bound to nothing, or a type no bound role reaches
// (and no rule function could), is a warning: logged (WithLogger) and
// returned by [Policy.Warnings].
func NewPolicy(defs *definition.Registry, rules Rules, opts ...PolicyOption) (*Policy, error) {
	var o policyOptions
	opt.Apply(&o, opts)
	if defs == nil {
		defs = definition.NewRegistry()
	}
	p := &Policy{defs: defs, audit: newAuditor(o.audit, o.sample)}
	pages := append(slices.Clone(BuiltinPages), o.pages...)
	var errs []error
	for i := range rules.Roles {
		errs = append(errs, p.addRole(&rules.Roles[i], pages))
	}
	for i := range rules.Bindings {
		errs = append(errs, p.addBinding(&rules.Bindings[i]))
	}
	for _, f := range rules.Funcs {
		errs = append(errs, p.addFunc(f))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	p.warnings = p.findWarnings()
	if o.logger != nil {
		for _, w := range p.warnings {
			o.logger.Warn("access: " + w)
		}
	}
	return p, nil
}

// Warnings returns what NewPolicy warned about.
func (p *Policy) Warnings() []string { return slices.Clone(p.warnings) }

// Definitions returns the definitions the policy decides over.
func (p *Policy) Definitions() *definition.Registry { return p.defs }

func (p *Policy) addRole(r *Role, pages []Page) error {
	if r.Name == "" {
		return fmt.Errorf("%sa role without a name", r.pos)
	}
	if slices.ContainsFunc(p.roles, func(x *role) bool { return x.name == r.Name }) {
		return fmt.Errorf("%srole %q is defined twice", r.pos, r.Name)
	}
	c := &role{name: r.Name, rule: "role " + r.Name, pos: r.pos}
	for _, g := range r.Grants {
		cg, err := p.compileGrant(g)
		if err != nil {
			return fmt.Errorf("%srole %q: %w", r.pos, r.Name, err)
		}
		c.gs = append(c.gs, cg)
	}
	for _, pg := range r.Pages {
		switch {
		case pg == "*":
			c.all = true
		case slices.Contains(pages, pg):
			c.pages = append(c.pages, pg)
		default:
			return fmt.Errorf("%srole %q: unknown page %q (known: %v, or \"*\")", r.pos, r.Name, pg, pages)
		}
	}
	p.roles = append(p.roles, c)
	return nil
}

func (p *Policy) compileGrant(g Grant) (grant, error) {
	var c grant
	for _, v := range g.Verbs {
		if v < Get || v > Destroy {
			return c, fmt.Errorf("unknown verb %v", v)
		}
	}
	c.verbs = setOf(g.Verbs)
	switch {
	case c.verbs == 0:
		return c, errors.New("a grant of no verb")
	case len(g.Namespaces) == 0:
		return c, errors.New("a grant of no namespace (\"*\" grants every one)")
	case len(g.Types) == 0:
		return c, errors.New("a grant of no type (\"*\" grants every type that is not sensitive)")
	}
	for _, ns := range g.Namespaces {
		if err := c.ns.add(ns, sameName); err != nil {
			return c, fmt.Errorf("namespace: %w", err)
		}
	}
	resolve := typeResolver(p.defs)
	for _, typ := range g.Types {
		if err := c.types.add(typ, resolve); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (p *Policy) addBinding(b *Binding) error {
	i := slices.IndexFunc(p.roles, func(x *role) bool { return x.name == b.Role })
	switch {
	case i < 0:
		return fmt.Errorf("%sa binding of unknown role %q", b.pos, b.Role)
	case len(b.To) == 0:
		return fmt.Errorf("%sthe binding of role %q binds it to nobody", b.pos, b.Role)
	}
	for _, m := range b.To {
		if m.field == matchNone {
			return fmt.Errorf("%sthe binding of role %q: an empty match (use access.UID, access.CertSubject, ...)", b.pos, b.Role)
		}
	}
	p.roles[i].bound = true
	p.bindings = append(p.bindings, binding{role: p.roles[i], to: slices.Clone(b.To)})
	return nil
}

func (p *Policy) addFunc(f Func) error {
	if f.Name == "" || f.Func == nil {
		return fmt.Errorf("a rule function needs a name and a function (got name %q)", f.Name)
	}
	p.funcs = append(p.funcs, compiledFunc{rule: "function " + f.Name, fn: f.Func})
	return nil
}

// findWarnings lists the roles bound to nothing and the types no bound
// role reaches (unless rule functions could reach them).
func (p *Policy) findWarnings() []string {
	var out []string
	for _, r := range p.roles {
		if !r.bound {
			out = append(out, fmt.Sprintf("%srole %q is bound to no identity: it grants nothing", r.pos, r.name))
		}
	}
	if len(p.funcs) > 0 {
		return out
	}
	for _, d := range p.defs.All() {
		if !p.reachable(d.Type, d.Sensitive) {
			what := "no bound role's grant reaches it"
			if d.Sensitive {
				what += " (it is sensitive: only a grant naming it reaches it)"
			}
			out = append(out, fmt.Sprintf("type %s: %s", d.Type, what))
		}
	}
	return out
}

func (p *Policy) reachable(typ string, sensitive bool) bool {
	for _, r := range p.roles {
		if !r.bound {
			continue
		}
		for i := range r.gs {
			if r.gs[i].types.match(typ, sensitive) {
				return true
			}
		}
	}
	return false
}
