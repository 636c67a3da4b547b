package dependency

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Unwritten is an input kind of a controller that no registered controller
// declares as an output: only writers outside the Runtime change it.
type Unwritten struct {
	// Controller is the name of the controller with the input.
	Controller string
	// Kind is the input's kind (namespace and type).
	Kind resource.KindKey
}

// Writes reports whether one of recs declares an output of typ written in
// ns: an output of that type in that namespace, or in any (an output
// without a namespace).
func Writes[H any](recs []Record[H], ns resource.Namespace, typ resource.Type) bool {
	for i := range recs {
		for _, out := range recs[i].Outputs {
			if out.Type == typ && (out.Namespace == "" || out.Namespace == ns) {
				return true
			}
		}
	}
	return false
}

// UnwrittenOf returns the input kinds (static and dynamic) of the records
// named (all when names is empty) that none of recs writes ([Writes]),
// one per controller and kind, sorted by controller and kind.
func UnwrittenOf[H any](recs []Record[H], names ...string) []Unwritten {
	var out []Unwritten
	for i := range recs {
		rec := &recs[i]
		if len(names) > 0 && !slices.Contains(names, rec.Name) {
			continue
		}
		out = append(out, unwrittenInputs(recs, rec.Name, slices.Concat(rec.Static, rec.Dynamic))...)
	}
	slices.SortFunc(out, compareUnwritten)
	return slices.Compact(out)
}

// unwrittenInputs returns the kinds of inputs, of the controller name, that
// none of recs writes.
func unwrittenInputs[H any](recs []Record[H], name string, inputs []controller.Input) []Unwritten {
	var out []Unwritten
	for _, in := range inputs {
		if !Writes(recs, in.Namespace, in.Type) {
			out = append(out, Unwritten{Controller: name, Kind: resource.KindOf(resource.NewKind(in.Namespace, in.Type))})
		}
	}
	return out
}

// UnwrittenInputs returns the kinds of inputs, declared by the controller
// name, that none of recs writes, one per kind, sorted.
func UnwrittenInputs[H any](recs []Record[H], name string, inputs []controller.Input) []Unwritten {
	out := unwrittenInputs(recs, name, inputs)
	slices.SortFunc(out, compareUnwritten)
	return slices.Compact(out)
}

func compareUnwritten(a, b Unwritten) int {
	return cmp.Or(cmp.Compare(a.Controller, b.Controller), a.Kind.Compare(b.Kind))
}
