package routed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Rule routes namespaces to a backend: the namespace Namespace itself, or,
// when Prefix is set, every namespace that begins with it. Make one with
// [Exact] or [Prefix].
type Rule struct {
	// Namespace is the namespace (Prefix unset) or the prefix of the
	// namespaces (Prefix set) the rule covers. An empty prefix covers
	// every namespace.
	Namespace resource.Namespace
	// Prefix makes Namespace a prefix.
	Prefix bool
	// Backend serves the namespaces the rule covers.
	Backend state.State
}

// Exact returns the rule that routes namespace ns to backend.
func Exact(ns resource.Namespace, backend state.State) Rule {
	return Rule{Namespace: ns, Backend: backend}
}

// Prefix returns the rule that routes every namespace beginning with
// prefix to backend.
func Prefix(prefix string, backend state.State) Rule {
	return Rule{Namespace: prefix, Prefix: true, Backend: backend}
}

// String names the rule in errors: `namespace "config"` or
// `prefix "sys."`.
func (r Rule) String() string {
	if r.Prefix {
		return "prefix " + strconv.Quote(r.Namespace)
	}
	return "namespace " + strconv.Quote(r.Namespace)
}

// overlaps reports whether some namespace is covered by both rules.
func (r Rule) overlaps(o Rule) bool {
	switch {
	case r.Prefix && o.Prefix:
		return strings.HasPrefix(r.Namespace, o.Namespace) || strings.HasPrefix(o.Namespace, r.Namespace)
	case r.Prefix:
		return strings.HasPrefix(o.Namespace, r.Namespace)
	case o.Prefix:
		return strings.HasPrefix(r.Namespace, o.Namespace)
	}
	return r.Namespace == o.Namespace
}

// The problems [New] refuses rules for, each in a [*RuleError] (test with
// errors.Is).
var (
	// ErrOverlap: two rules cover a namespace in common (an exact name
	// twice, an exact name and a prefix of it, two prefixes one of which
	// begins the other).
	ErrOverlap = errors.New("rules overlap")
	// ErrUncovered: a namespace given to [WithNamespaces] is covered by
	// no rule, and there is no default backend ([WithDefault]).
	ErrUncovered = errors.New("no rule covers the namespace")
	// ErrBadRule: a rule without a backend, an exact rule with an empty
	// namespace, or no rule and no default backend.
	ErrBadRule = errors.New("bad rule")
)

// RuleError is the error of [New] for rules it refuses: Err is
// [ErrOverlap], [ErrUncovered] or [ErrBadRule]; Rules are the rules at
// fault (both of an overlap; every rule for an uncovered namespace) and
// Namespace the namespace at fault, when there is one.
type RuleError struct {
	Err       error
	Rules     []Rule
	Namespace resource.Namespace
}

func (e *RuleError) Error() string {
	var b strings.Builder
	b.WriteString("routed state: ")
	b.WriteString(e.Err.Error())
	if e.Namespace != "" {
		fmt.Fprintf(&b, ": namespace %q", e.Namespace)
	}
	if len(e.Rules) > 0 {
		b.WriteString(": ")
		b.WriteString(rulesString(e.Rules))
	}
	return b.String()
}

// Unwrap returns Err.
func (e *RuleError) Unwrap() error { return e.Err }

// InvalidError puts the error in the invalid class ([state.IsInvalidError]):
// the rules are bad input.
func (*RuleError) InvalidError() {}

// rulesString lists rules for an error: "rule 1 (namespace "a"), rule 2
// (prefix "b")", numbered from 1 in the order given to New.
func rulesString(rules []Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = r.String()
	}
	if len(parts) == 0 {
		return "no rules"
	}
	return "rules " + strings.Join(parts, ", ")
}

// checkRules refuses a rule without a backend or namespace, and two rules
// that overlap.
func checkRules(rules []Rule, def state.State) error {
	if len(rules) == 0 && def == nil {
		return &RuleError{Err: fmt.Errorf("%w: no rule and no default backend", ErrBadRule)}
	}
	for i, r := range rules {
		switch {
		case usercode.IsNil(r.Backend):
			return &RuleError{Err: fmt.Errorf("%w: rule %d has no backend", ErrBadRule, i+1), Rules: []Rule{r}}
		case !r.Prefix && r.Namespace == "":
			return &RuleError{Err: fmt.Errorf("%w: rule %d names the empty namespace", ErrBadRule, i+1), Rules: []Rule{r}}
		}
		for j, o := range rules[:i] {
			if r.overlaps(o) {
				return &RuleError{Err: fmt.Errorf("%w (rules %d and %d)", ErrOverlap, j+1, i+1), Rules: []Rule{o, r}}
			}
		}
	}
	return nil
}
