// Package backend holds what resgraph's State backends (pkg/state/inmem
// and the etcd state) do alike below the state contract, so that each
// rule is written once: the checks of an Update against the stored
// resource, the resource a single-resource watch of an absent resource
// reports, and the send of a watch event that gives up when the watch
// ends.
package backend

import (
	"context"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// CheckUpdate reports why an Update with the metadata md may not replace
// the stored resource whose metadata is stored, in the order of the
// checks: version, incarnation, owner, phase.
func CheckUpdate(md, stored *resource.Metadata, o state.UpdateOptions) error {
	// Read in place (Head, IncarnationOf): the getters have value
	// receivers, and each call through a pointer copies the metadata.
	ver, phase, owner := stored.Head()
	if given, _, _ := md.Head(); !ver.Equal(given) {
		return state.NewConflictError(resource.PointerOf(md), "version is %s, update is based on %s", ver, given)
	}
	// A version alone does not tell incarnations apart (each starts at 1):
	// an update based on a resource that was destroyed and created again
	// since it was read would silently overwrite the new one. Creation
	// times are unique per kind, so a caller's non-zero creation time
	// that differs from the stored one is a conflict.
	if !md.IncarnationOf(stored) {
		return state.NewConflictError(resource.PointerOf(md), "update is based on an earlier incarnation (created %s; the stored one was created %s)",
			md.Created().Format(time.RFC3339Nano), stored.Created().Format(time.RFC3339Nano))
	}
	if owner != o.Owner {
		return state.NewOwnerConflictError(resource.PointerOf(md), "owner is %q, not %q", owner, o.Owner)
	}
	if o.ExpectedPhase != nil && phase != *o.ExpectedPhase {
		return state.NewPhaseConflictError(resource.PointerOf(md), "phase is %s, expected %s", phase, *o.ExpectedPhase)
	}
	return nil
}

// PointerOnly returns the resource a single-resource watch reports as
// Destroyed when the resource does not exist at the watch's start (rule
// S8): the resource's tombstone (resource.IsTombstone).
func PointerOnly(ptr resource.Pointer) resource.Resource {
	return resource.NewTombstone(ptr)
}

// Send sends v on a watch's channel ch and reports true, or gives up and
// reports false once ctx is done. A send that does not block locks only
// ch: it is tried first, because the select with ctx.Done also locks the
// context's channel, which every watch of that context shares.
func Send[T any](ctx context.Context, ch chan<- T, v T) bool {
	select {
	case ch <- v:
		return true
	default:
	}
	select {
	case ch <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
