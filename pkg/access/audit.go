package access

import (
	"context"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/resource"
)

// auditor writes the audit records (rule A3): one per write, one per
// denial, one per sampled read. A nil auditor writes nothing.
type auditor struct {
	l      *zap.Logger
	sample uint64
	reads  atomic.Uint64
}

func newAuditor(l *zap.Logger, sample uint64) *auditor {
	if l == nil {
		return nil
	}
	return &auditor{l: l, sample: sample}
}

// The audit record's message and decisions.
const (
	auditMessage = "access"
	allowed      = "allowed"
	deniedText   = "denied"
)

// fields returns the fields every record has: who, the verb or page, the
// resource, the decision and the rule that made it.
func fields(a *Access, s *Subject, d Decision, extra int) []zap.Field {
	out := make([]zap.Field, 0, 8+extra)
	out = append(out, zap.String("identity", a.Identity.String()), zap.String("peer", a.Identity.Detail()))
	if a.Page != "" {
		out = append(out, zap.String("page", string(a.Page)))
	} else if a.Verb != 0 {
		out = append(out, zap.String("verb", a.Verb.String()), zap.String("namespace", a.Namespace), zap.String("type", a.Type))
		if a.ID != "" {
			out = append(out, zap.String("id", a.ID))
		}
	}
	decision, rule := deniedText, d.Rule
	if d.Allowed {
		decision = allowed
	}
	if rule == "" {
		rule = "default deny"
	}
	out = append(out, zap.String("decision", decision), zap.String("rule", rule))
	if len(s.roles) > 0 {
		out = append(out, zap.Strings("roles", s.Roles()))
	}
	return out
}

// denial records a denied access.
func (au *auditor) denial(a *Access, s *Subject, d Decision, err error) {
	if au == nil {
		return
	}
	au.l.Info(auditMessage, append(fields(a, s, d, 1), zap.String("reason", err.Error()))...)
}

// write records an allowed write, with the version it wrote or its
// error.
func (au *auditor) write(a *Access, s *Subject, d Decision, v resource.Version, err error) {
	if au == nil {
		return
	}
	f := fields(a, s, d, 1)
	if err != nil {
		f = append(f, zap.String("error", err.Error()))
	} else if a.Verb != Destroy {
		f = append(f, zap.Uint64("version", v.Value()))
	}
	au.l.Info(auditMessage, f...)
}

// read records an allowed read, one in every sample.
func (au *auditor) read(a *Access, s *Subject, d Decision) {
	if au == nil || au.sample == 0 || au.reads.Add(1)%au.sample != 0 {
		return
	}
	au.l.Info(auditMessage, append(fields(a, s, d, 1), zap.Uint64("sampledOneIn", au.sample))...)
}

// Page decides an access of the subject to a page and audits it as the
// guarded state does: a denial always, an allowed access when sampled. A
// denial is returned as a [*DeniedError].
func (s *Subject) Page(ctx context.Context, page Page) error {
	a := Access{Identity: &s.id, Page: page}
	d := s.decide(ctx, &a)
	if !d.Allowed {
		err := newDenied(&a, d)
		s.p.audit.denial(&a, s, d, err)
		return err
	}
	s.p.audit.read(&a, s, d)
	return nil
}

// CheckBound returns a [*DeniedError], audited, when the subject is not
// [Subject.Bound]: the doors' answer to a question about the state as a
// whole from an identity no rule knows.
func (s *Subject) CheckBound() error {
	if s.Bound() {
		return nil
	}
	a := Access{Identity: &s.id}
	err := &DeniedError{Identity: s.id.String()}
	s.p.audit.denial(&a, s, Decision{}, err)
	return err
}

// AuditRefused records a connection a door refused because its peer could
// not be authenticated (no client certificate, one that does not verify,
// no peer credentials): one audit record naming the peer's address and
// the error.
func (p *Policy) AuditRefused(door, peer string, err error) {
	if p.audit == nil {
		return
	}
	p.audit.l.Info(auditMessage, zap.String("identity", "none"), zap.String("peer", peer), zap.String("door", door),
		zap.String("decision", deniedText), zap.String("rule", "authentication"), zap.String("reason", err.Error()))
}

// RefuseCall returns a [*DeniedError], audited, for a call of a door that
// no page grants (a service the door does not know).
func (s *Subject) RefuseCall(call string) error {
	a := Access{Identity: &s.id, Page: Page(call)}
	err := &DeniedError{Identity: s.id.String(), Call: call}
	s.p.audit.denial(&a, s, Decision{}, err)
	return err
}
