package recording

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// classify turns a watch event into a change: who made it (rule RC2) and
// what it did. ok is false for an event that is no change (a marker).
func classify(ev *state.Event, controllers *owners) (e change, ok bool) {
	res := ev.Resource
	if res == nil {
		return change{}, false
	}
	md := res.Metadata()
	e = change{res: res, rev: ev.Revision}
	switch ev.Type {
	case state.Created:
		e.op = OpCreate
		e.coalesced = md.Version().Value() > 1
	case state.Updated:
		e.op = OpUpdate
		if ev.Old != nil {
			old := ev.Old.Metadata()
			if old.Phase() == resource.PhaseRunning && md.Phase() == resource.PhaseTearingDown {
				e.op = OpTeardown
			}
			e.coalesced = md.Version().Value() != old.Version().Value()+1
		}
	case state.Destroyed:
		e.op = OpDestroy
	default:
		return change{}, false
	}
	owner := md.Owner()
	switch {
	case e.op == OpUpdate && ev.Old != nil && finalizersOnly(ev.Old, res):
		e.by, e.writer = ByController, finalizerHolder(ev.Old, res, controllers.names)
	case owner != "" && controllers.is(owner):
		e.by, e.writer = ByController, owner
	default:
		e.by = ByOutside
	}
	return e, true
}

// finalizersOnly reports whether b differs from a in its finalizers (and
// version and update time) only: a finalizer holder's write (rule C5).
func finalizersOnly(a, b resource.Resource) bool {
	am, bm := a.Metadata(), b.Metadata()
	if slices.Equal(*am.Finalizers(), *bm.Finalizers()) {
		return false
	}
	md := am.Copy()
	md.SetVersion(bm.Version())
	*md.Finalizers() = append(resource.Finalizers(nil), *bm.Finalizers()...)
	return md.Equal(*bm) && resource.SpecEqual(a.Spec(), b.Spec())
}

// finalizerHolder names the controller that made a change of finalizers
// alone from a to b: the one finalizer added or removed, when it is a
// controller's name (a controller's hold is usually named after it);
// "" otherwise — the resource's owner is not the writer of its
// finalizers.
func finalizerHolder(a, b resource.Resource, controllers map[string]bool) string {
	af, bf := *a.Metadata().Finalizers(), *b.Metadata().Finalizers()
	var diff []resource.Finalizer
	for _, f := range af {
		if !slices.Contains(bf, f) {
			diff = append(diff, f)
		}
	}
	for _, f := range bf {
		if !slices.Contains(af, f) {
			diff = append(diff, f)
		}
	}
	if len(diff) == 1 && controllers[string(diff[0])] {
		return string(diff[0])
	}
	return ""
}

// owners are the controllers' names, with the answer for the last name
// asked (a batch's changes are mostly one controller's). Used under the
// recorder's lock.
type owners struct {
	names  map[string]bool
	last   string
	lastIs bool
}

func (o *owners) set(names map[string]bool) { *o = owners{names: names} }

func (o *owners) is(name string) bool {
	if name != o.last || o.last == "" {
		o.last, o.lastIs = name, o.names[name]
	}
	return o.lastIs
}
