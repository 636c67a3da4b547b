package recording

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// backendRouter is a state that serves each namespace from a backend of
// its own (*routed.State), each of which numbers its changes on its own.
type backendRouter interface {
	Backend(ns resource.Namespace) (state.State, error)
}

// domains are the revision domains of a session's kinds: the kinds whose
// changes one sequence numbers share a domain (rule RC1). of is nil when
// every kind's changes are numbered by one sequence. revs are what tells
// each domain's revisions (a routed state's backend; nil when nothing
// does: a wrapper that hides the routes).
type domains struct {
	of   map[resource.KindKey]uint16
	n    int
	revs []state.RevisionReporter
}

// revisionDomains returns the revision domains of kinds in st: over a
// routed state, one per backend its kinds live in; over another state
// that reports no revision shared by its changes (Revision fails with an
// error matching errors.ErrUnsupported: a wrapper of a routed state), one
// per namespace (a routed state serves a namespace from one backend);
// otherwise one.
func revisionDomains(ctx context.Context, st state.State, kinds []Kind) domains {
	var backends []state.State
	var namespaces []resource.Namespace
	d := domains{of: map[resource.KindKey]uint16{}}
	br, routed := st.(backendRouter)
	if !routed {
		rr, ok := st.(state.RevisionReporter)
		if !ok {
			return domains{}
		}
		if _, err := rr.Revision(ctx); !errors.Is(err, errors.ErrUnsupported) {
			return domains{}
		}
	}
	for _, k := range kinds {
		var i int
		if routed {
			b, err := br.Backend(k.Namespace)
			if err != nil {
				return domains{} // the kind's list fails: the session ends
			}
			i = indexOfBackend(backends, b)
			if i == len(backends) {
				backends = append(backends, b)
			}
		} else if i = slices.Index(namespaces, k.Namespace); i < 0 {
			i = len(backends)
			backends, namespaces = append(backends, nil), append(namespaces, k.Namespace)
		}
		d.of[resource.KindOf(resource.NewKind(k.Namespace, k.Type))] = uint16(i)
	}
	if d.n = len(backends); d.n < 2 {
		return domains{}
	}
	d.revs = make([]state.RevisionReporter, d.n)
	for i, b := range backends {
		d.revs[i], _ = b.(state.RevisionReporter)
	}
	return d
}

// kindRevisions returns the revision of each kind's newest change, and
// for each domain the newest of its kinds'.
func (d domains) kindRevisions(ctx context.Context, st state.State, kinds []Kind) ([]uint64, map[resource.KindKey]uint64, error) {
	want := make([]uint64, max(d.n, 1))
	last := make(map[resource.KindKey]uint64, len(kinds))
	for _, k := range kinds {
		kind := resource.NewKind(k.Namespace, k.Type)
		rr, i, err := d.reporterOf(st, kind)
		if err != nil {
			return nil, nil, err
		}
		rev, _, err := rr.KindRevision(ctx, kind)
		if err != nil {
			return nil, nil, err
		}
		want[i], last[resource.KindOf(kind)] = max(want[i], rev), rev
	}
	return want, last, nil
}

// reporterOf returns what numbers the changes of kind, and its domain.
func (d domains) reporterOf(st state.State, kind resource.Kind) (state.RevisionReporter, int, error) {
	if d.of == nil {
		if rr, ok := st.(state.RevisionReporter); ok {
			return rr, 0, nil
		}
		return nil, 0, fmt.Errorf("recording: %T does not number its changes: %w", st, errors.ErrUnsupported)
	}
	i := int(d.of[resource.KindOf(kind)])
	if d.revs[i] == nil {
		return nil, 0, fmt.Errorf("recording: %T numbers its namespaces' changes apart and does not tell each one's revisions: %w", st, errors.ErrUnsupported)
	}
	return d.revs[i], i, nil
}

// revision returns the state's revision now: over several domains, the
// highest of their revisions (as Recording.Revision is), over a state
// that does not tell them, 0.
func (d domains) revision(ctx context.Context, st state.State) uint64 {
	if d.of == nil {
		if rr, ok := st.(state.RevisionReporter); ok {
			rev, _ := rr.Revision(ctx)
			return rev
		}
		return 0
	}
	var rev uint64
	for _, rr := range d.revs {
		if rr != nil {
			r, _ := rr.Revision(ctx)
			rev = max(rev, r)
		}
	}
	return rev
}

// indexOfBackend returns the index of b in backends (equal interface
// values of a comparable type), len(backends) when it is not there.
func indexOfBackend(backends []state.State, b state.State) int {
	t := reflect.TypeOf(b)
	for i, o := range backends {
		if t != nil && t.Comparable() && reflect.TypeOf(o) == t && o == b {
			return i
		}
	}
	return len(backends)
}

// at returns the domains of the kinds and each domain's revision of a
// listed state (the newest of its kinds' lists); nil and nil for one
// domain, and over a state that listed at revision 0 (it does not number
// its changes: they keep their order of arrival).
func (d domains) at(s *startState) (map[resource.KindKey]uint16, []uint64) {
	if d.of == nil || s.rev == 0 {
		return nil, nil
	}
	revs := make([]uint64, d.n)
	for k, rev := range s.kindRev {
		i := d.of[k]
		revs[i] = max(revs[i], rev)
	}
	return d.of, revs
}
