package conformance

import (
	"fmt"
	"maps"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// watchView is what one kind watcher has seen: the last state of every
// resource it was told about. apply checks each event against the view by
// the derivation rules of S12 (which also hold for uncoalesced streams):
// Created only for a resource absent from the view, Updated only for one
// present, with Old equal to the state in the view and a newer version,
// Destroyed only for one present. The problems it finds are recorded, not
// asserted, so a view can be fed from any goroutine.
type watchView struct {
	seen         map[resource.ID]resource.Resource
	problems     []string
	events       int
	bootstrapped bool
}

func newWatchView() *watchView {
	return &watchView{seen: map[resource.ID]resource.Resource{}}
}

func (v *watchView) problem(ev state.Event, format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...)+": "+eventString(ev))
}

// apply records ev.
func (v *watchView) apply(ev state.Event) {
	v.events++
	switch ev.Type {
	case state.Bootstrapped:
		if v.bootstrapped {
			v.problem(ev, "second Bootstrapped")
		}
		v.bootstrapped = true
		return
	case state.Errored:
		v.problem(ev, "Errored event")
		return
	case state.Noop:
		return
	}
	if ev.Resource == nil {
		v.problem(ev, "event without a resource")
		return
	}
	id := ev.Resource.Metadata().ID()
	last, present := v.seen[id]
	switch ev.Type {
	case state.Created:
		if present {
			v.problem(ev, "Created for a resource the watcher holds")
		}
		v.seen[id] = ev.Resource
	case state.Updated:
		switch {
		case !present:
			v.problem(ev, "Updated for a resource the watcher does not hold")
		case ev.Old == nil:
			v.problem(ev, "Updated without Old")
		case version(ev.Old) != version(last):
			v.problem(ev, "Updated with Old version %d, the watcher last saw %d", version(ev.Old), version(last))
		case version(ev.Resource) <= version(last):
			v.problem(ev, "Updated to version %d after %d", version(ev.Resource), version(last))
		}
		v.seen[id] = ev.Resource
	case state.Destroyed:
		if !present {
			v.problem(ev, "Destroyed for a resource the watcher does not hold")
		} else if version(ev.Resource) != 0 && version(ev.Resource) < version(last) {
			v.problem(ev, "Destroyed with version %d after %d", version(ev.Resource), version(last))
		}
		delete(v.seen, id)
	default:
		v.problem(ev, "unknown event type")
	}
}

// versions returns the version of every resource in the view.
func (v *watchView) versions() map[resource.ID]uint64 {
	out := make(map[resource.ID]uint64, len(v.seen))
	for id, r := range v.seen {
		out[id] = version(r)
	}
	return out
}

// matches reports whether the view holds exactly the given versions.
func (v *watchView) matches(want map[resource.ID]uint64) bool {
	return maps.Equal(v.versions(), want)
}

// listVersions returns the version of every resource the state lists.
func (s *StateSuite) listVersions(opts ...state.ListOption) map[resource.ID]uint64 {
	list, err := s.State.List(s.ctx, s.kind(), opts...)
	s.Require().NoError(err)
	out := make(map[resource.ID]uint64, len(list.Items))
	for _, r := range list.Items {
		out[r.Metadata().ID()] = version(r)
	}
	return out
}

// converge feeds events from ch into v until it holds exactly want, failing
// at the test's deadline.
func (s *StateSuite) converge(ch <-chan state.Event, v *watchView, want map[resource.ID]uint64) {
	s.T().Helper()
	for !v.matches(want) {
		select {
		case ev := <-ch:
			v.apply(ev)
		case <-s.ctx.Done():
			s.FailNowf("watch did not converge to the final state", "want %v, have %v; problems: %v", want, v.versions(), v.problems)
		}
	}
	s.Empty(v.problems)
}
