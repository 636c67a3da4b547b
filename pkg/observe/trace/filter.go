package trace

import "slices"

// Filter selects events. The zero Filter selects every event.
type Filter struct {
	// Controller, when set, selects the events of that controller.
	Controller string
	// Resource, when set (its namespace, type and ID; version and writer
	// are ignored), selects the events about that resource or caused by a
	// change of it.
	Resource Ref
	// Types, when set, selects events of these types.
	Types []Type
}

// Match reports whether f selects e.
func (f *Filter) Match(e *Event) bool {
	if f.Controller != "" && e.Controller != f.Controller {
		return false
	}
	if !f.Resource.IsZero() && !e.Resource.SameResource(f.Resource) && !e.Cause.SameResource(f.Resource) {
		return false
	}
	return len(f.Types) == 0 || slices.Contains(f.Types, e.Type)
}

// Select returns the events of evs that f selects, in order, in a new
// slice.
func (f *Filter) Select(evs []Event) []Event {
	out := make([]Event, 0, len(evs))
	for i := range evs {
		if f.Match(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	return out
}
