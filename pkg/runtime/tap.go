package runtime

import (
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/state"
)

// ChangeTap sees the changes of the kinds the Runtime watches as its
// watches receive them ([Runtime.TapChanges]): a flight recorder (package
// recording) records them without a watch of its own, so that the state
// sends each change once, to the Runtime.
type ChangeTap interface {
	// Changes is called on the kind's watch goroutine with the live
	// changes of one batch the watch received, in the state's order. It
	// must return promptly (the kind's routing waits for it) and keep
	// neither the slice nor the events; it may keep their resources (the
	// state's shared snapshots), read-only.
	Changes(kind resource.KindKey, events []state.Event)
	// Lost is called when the kind's watch ended while the Runtime runs
	// (it failed, or re-lists): the changes until it is live again reach
	// the Runtime as a diff, which Changes does not see.
	Lost(kind resource.KindKey)
}

// ErrTapped is returned by TapChanges when another tap is set.
var ErrTapped = route.ErrTapped

// TapChanges makes t see every live change of the kinds the Runtime
// watches (its controllers' inputs and its cached kinds), from now until
// remove. It waits until the watch of each of kinds that the Runtime
// watches has delivered its first bootstrap (so the Runtime must run;
// ctx bounds the wait): from its return, t sees every change of those
// kinds made after the state their bootstraps listed. It returns those
// kinds, sorted: t never sees the others. One tap at a time: a second
// is ErrTapped until the first is removed.
func (r *Runtime) TapChanges(ctx context.Context, t ChangeTap, kinds []resource.KindKey) (tapped []resource.KindKey, remove func(), err error) {
	watched := append(r.db.Snapshot().Keys(), r.caches.Keys()...)
	for _, k := range kinds {
		if slices.Contains(watched, k) {
			tapped = append(tapped, k)
		}
	}
	slices.SortFunc(tapped, resource.KindKey.Compare)
	tapped = slices.Compact(tapped)
	remove, err = r.router.SetTap(t)
	if err != nil {
		return nil, nil, err
	}
	if !r.router.WaitBootstrapped(ctx, tapped) {
		remove()
		return nil, nil, ctx.Err()
	}
	return tapped, remove, nil
}
