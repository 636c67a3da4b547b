package routed

import (
	"reflect"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// State is a [state.State] that serves each namespace from the backend
// its rules name (see the package documentation). Make one with [New].
type State struct {
	rules []Rule
	// exact maps the namespaces of exact rules to their backend's index
	// in backends; prefixes are the prefix rules with theirs.
	exact    map[resource.Namespace]int
	prefixes []prefixRoute
	// def is the index of the default backend, -1 when there is none.
	def int
	// backends are the distinct backends, in the order of the rules,
	// the default last.
	backends []state.State
}

// prefixRoute is a prefix rule and its backend's index.
type prefixRoute struct {
	prefix  string
	backend int
}

var _ state.State = (*State)(nil)

// Option configures [New].
type Option func(*options)

type options struct {
	def        state.State
	namespaces []resource.Namespace
}

// WithDefault makes backend serve every namespace that no rule covers.
// Without it, such a namespace is refused: by [New] when given to
// [WithNamespaces], by ValidateType (so at a controller's registration), and
// by every call with an invalid-class error naming the rules.
func WithDefault(backend state.State) Option {
	return func(o *options) { o.def = backend }
}

// WithNamespaces names namespaces the state must serve: [New] fails with
// [ErrUncovered], naming the rules, when no rule covers one of them and
// there is no default backend.
func WithNamespaces(ns ...resource.Namespace) Option {
	return func(o *options) { o.namespaces = append(o.namespaces, ns...) }
}

// New returns a state that serves each namespace from the backend of the
// rule that covers it, or from the default backend ([WithDefault]). It
// refuses, with a [*RuleError] (of the invalid class) naming the rules at
// fault: rules that overlap (a namespace two rules cover, whatever their
// backends), a rule without a backend, an exact rule for the empty
// namespace, no rule and no default, and a namespace of [WithNamespaces]
// that nothing covers. It starts no goroutine: the backends stay the
// caller's, to open before and close after the state's use.
func New(rules []Rule, opts ...Option) (*State, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if usercode.IsNil(o.def) {
		o.def = nil
	}
	if err := checkRules(rules, o.def); err != nil {
		return nil, err
	}
	s := &State{rules: slices.Clone(rules), exact: map[resource.Namespace]int{}, def: -1}
	for _, r := range rules {
		i := s.add(r.Backend)
		if r.Prefix {
			s.prefixes = append(s.prefixes, prefixRoute{prefix: r.Namespace, backend: i})
		} else {
			s.exact[r.Namespace] = i
		}
	}
	if o.def != nil {
		s.def = s.add(o.def)
	}
	for _, ns := range o.namespaces {
		if _, ok := s.index(ns); !ok {
			return nil, &RuleError{Err: ErrUncovered, Namespace: ns, Rules: s.rules}
		}
	}
	return s, nil
}

// add returns the index of backend b in s.backends, adding it when it is
// not there. Backends are the same when they are equal interface values
// (the same pointer, for the states of this module).
func (s *State) add(b state.State) int {
	if reflect.TypeOf(b).Comparable() {
		for i, o := range s.backends {
			if reflect.TypeOf(o) == reflect.TypeOf(b) && o == b {
				return i
			}
		}
	}
	s.backends = append(s.backends, b)
	return len(s.backends) - 1
}

// index returns the index of the backend that serves ns, and whether one
// does.
func (s *State) index(ns resource.Namespace) (int, bool) {
	if i, ok := s.exact[ns]; ok {
		return i, true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(ns, p.prefix) {
			return p.backend, true
		}
	}
	return s.def, s.def >= 0
}

// Backend returns the backend that serves namespace ns, or an error of the
// invalid class naming the rules when none does.
func (s *State) Backend(ns resource.Namespace) (state.State, error) {
	i, ok := s.index(ns)
	if !ok {
		return nil, s.uncovered(nil, ns)
	}
	return s.backends[i], nil
}

// Rules returns the state's rules, in the order given to New.
func (s *State) Rules() []Rule { return slices.Clone(s.rules) }

// uncovered is the error of a call on a namespace no rule covers.
func (s *State) uncovered(p resource.Pointer, ns resource.Namespace) error {
	return state.NewInvalidError(p, "routed state: no rule covers namespace %q and there is no default backend (%s)", ns, rulesString(s.rules))
}

// fallback is the backend that answers bad input (a nil or empty
// identity): its own invalid-class error is the answer, as from any
// state.
func (s *State) fallback() state.State {
	if s.def >= 0 {
		return s.backends[s.def]
	}
	return s.backends[0]
}

// forPointer returns the backend of p's namespace; a nil pointer or an
// empty namespace goes to the fallback, which refuses it.
func (s *State) forPointer(p resource.Pointer) (state.State, error) {
	if usercode.IsNil(p) {
		return s.fallback(), nil
	}
	ns := p.Namespace()
	if ns == "" {
		return s.fallback(), nil
	}
	i, ok := s.index(ns)
	if !ok {
		return nil, s.uncovered(p, ns)
	}
	return s.backends[i], nil
}

// forKind is forPointer for a kind.
func (s *State) forKind(k resource.Kind) (state.State, error) {
	if usercode.IsNil(k) {
		return s.fallback(), nil
	}
	ns := k.Namespace()
	if ns == "" {
		return s.fallback(), nil
	}
	i, ok := s.index(ns)
	if !ok {
		return nil, s.uncovered(nil, ns)
	}
	return s.backends[i], nil
}

// forResource is forPointer for a resource's metadata (a resource is user
// code: a panic of its Metadata reaches the caller, as from any state).
func (s *State) forResource(r resource.Resource) (state.State, error) {
	if usercode.IsNil(r) {
		return s.fallback(), nil
	}
	md := r.Metadata()
	if md == nil {
		return s.fallback(), nil
	}
	return s.forPointer(md)
}
