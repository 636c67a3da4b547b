package recording

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// classify turns a watch event into a change: who made it (rule RC2) and
// what it did. ok is false for an event that is no change (a marker).
func classify(ev *state.Event, controllers *owners) (e change, ok bool) {
	if ev.Resource == nil {
		return change{}, false
	}
	v, ok := judge(ev, ev.Resource.Metadata(), controllers)
	if !ok {
		return change{}, false
	}
	return change{res: ev.Resource, rev: ev.Revision, op: v.op, by: v.by, writer: v.writer, coalesced: v.coalesced}, true
}

// verdict is what classify makes of a watch event: what it did, who made
// it (rule RC2) and, for a controller's change, which controller (writer,
// "" when it cannot be named).
type verdict struct {
	writer    string
	op        Op
	by        By
	coalesced bool
}

// judge returns the verdict on the event ev, whose resource is not nil
// and has the metadata md; ok is false for an event that is no change (a
// marker).
func judge(ev *state.Event, md *resource.Metadata, controllers *owners) (v verdict, ok bool) {
	ver, phase, owner := md.Head() // in place: the getters copy the metadata
	switch ev.Type {
	case state.Created:
		v.op = OpCreate
		v.coalesced = ver.Value() > 1
	case state.Updated:
		v.op = OpUpdate
		if ev.Old != nil {
			over, ophase, _ := ev.Old.Metadata().Head()
			if ophase == resource.PhaseRunning && phase == resource.PhaseTearingDown {
				v.op = OpTeardown
			}
			v.coalesced = ver.Value() != over.Value()+1
		}
	case state.Destroyed:
		v.op = OpDestroy
	default:
		return verdict{}, false
	}
	switch {
	case v.op == OpUpdate && ev.Old != nil && finalizersOnly(ev.Old, ev.Resource):
		v.by, v.writer = ByController, finalizerHolder(ev.Old, ev.Resource, controllers.names)
	case owner != "" && controllers.is(owner):
		v.by, v.writer = ByController, owner
	default:
		v.by = ByOutside
	}
	return v, true
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
	if o.last == "" || !sameString(name, o.last) {
		o.last, o.lastIs = name, o.names[name]
	}
	return o.lastIs
}
