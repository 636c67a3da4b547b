package trace

import "slices"

// Filter selects records. The zero Filter selects every record.
type Filter struct {
	// Controller, when set, selects the records of that controller.
	Controller string
	// Resource, when set (its namespace, type and ID; version and writer
	// are ignored), selects the records about that resource or caused by a
	// change of it.
	Resource Ref
	// Types, when set, selects records of these types.
	Types []Type
}

// Match reports whether f selects e.
func (f *Filter) Match(e *Record) bool {
	if f.Controller != "" && e.Controller != f.Controller {
		return false
	}
	if !f.Resource.IsZero() && !e.Resource.SameResource(f.Resource) && !e.Cause.SameResource(f.Resource) {
		return false
	}
	return len(f.Types) == 0 || slices.Contains(f.Types, e.Type)
}

// Select returns the records of recs that f selects, in order, in a new
// slice.
func (f *Filter) Select(recs []Record) []Record {
	out := make([]Record, 0, len(recs))
	for i := range recs {
		if f.Match(&recs[i]) {
			out = append(out, recs[i])
		}
	}
	return out
}
