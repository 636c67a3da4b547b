package gentest

import (
	"context"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Recreating is a CoreState that, once armed, destroys and creates again
// (equal, and at the same version 1 when it was at version 1) the resource
// an Update is about to write, just before that Update: the Update is then
// based on an earlier incarnation, which the state refuses as a conflict.
// Wrap it with state.WrapCore.
type Recreating struct {
	state.CoreState
	target    resource.Pointer
	armed     atomic.Bool
	conflicts atomic.Int32
}

// NewRecreating returns a Recreating over inner for the resource target.
func NewRecreating(inner state.CoreState, target resource.Pointer) *Recreating {
	return &Recreating{CoreState: inner, target: resource.PointerOf(target)}
}

// Arm makes the next Update of the target recreate it first.
func (s *Recreating) Arm() { s.armed.Store(true) }

// Conflicts is the number of Updates of the target refused as conflicts.
func (s *Recreating) Conflicts() int { return int(s.conflicts.Load()) }

// Update implements state.CoreState.
func (s *Recreating) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	if resource.PointerOf(r.Metadata()) != s.target {
		return s.CoreState.Update(ctx, r, opts...)
	}
	if s.armed.CompareAndSwap(true, false) {
		if cur, err := s.CoreState.Get(ctx, s.target); err == nil {
			owner := cur.Metadata().Owner()
			if err := s.CoreState.Destroy(ctx, s.target, state.WithDestroyOwner(owner)); err != nil {
				return err
			}
			fresh := cur.DeepCopy()
			fresh.Metadata().SetVersion(resource.VersionUndefined)
			if err := s.CoreState.Create(ctx, fresh, state.WithCreateOwner(owner)); err != nil {
				return err
			}
		}
	}
	err := s.CoreState.Update(ctx, r, opts...)
	if state.IsConflictError(err) {
		s.conflicts.Add(1)
	}
	return err
}
