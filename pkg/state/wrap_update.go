package state

import (
	"context"
	"fmt"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
)

// applyUpdateOptions applies opts to the defaults of
// [DefaultUpdateOptions], without allocating (see opt.ApplyPooled).
func applyUpdateOptions(opts []UpdateOption) UpdateOptions {
	return opt.ApplyPooled(&updateOptions, UpdateOptions{ExpectedPhase: &phaseRunning}, opts)
}

// updateOptions lends applyUpdateOptions its options value.
var updateOptions opt.Pool[UpdateOptions]

// phaseRunning is the expected phase of the default update options. The
// options of every call share it: they copy the pointer and never write
// through it.
var phaseRunning = resource.PhaseRunning

// checkWritable reports the owner or phase conflict an Update of cur with
// options o would meet.
func checkWritable(cur resource.Resource, o UpdateOptions) error {
	md := cur.Metadata()
	if md.Owner() != o.Owner {
		return NewOwnerConflictError(resource.PointerOf(md), "owner is %q, not %q", md.Owner(), o.Owner)
	}
	if o.ExpectedPhase != nil && md.Phase() != *o.ExpectedPhase {
		return NewPhaseConflictError(resource.PointerOf(md), "phase is %s, expected %s", md.Phase(), *o.ExpectedPhase)
	}
	return nil
}

// applyUpdater runs fn on a copy of cur and returns the copy. The result
// keeps cur's identity and version (a change to them is refused) and cur's
// owner (which the state takes from the write options, never from the
// resource).
//
// With into not nil (a resource of the caller's that it gives up), the
// copy is made in into's storage when cur can copy itself there (see
// deepCopyInto).
func applyUpdater(cur resource.Resource, fn func(resource.Resource) error, into resource.Resource) (resource.Resource, error) {
	upd, err := deepCopyInto(cur, into)
	if err != nil {
		return nil, err
	}
	if err := fn(upd); err != nil {
		return nil, err
	}
	md, curMD := upd.Metadata(), cur.Metadata()
	if !sameIdentity(md, curMD) {
		return nil, NewInvalidError(resource.PointerOf(curMD), "updater changed the identity to %s", resource.PointerString(md))
	}
	if !md.Version().Equal(curMD.Version()) {
		return nil, NewInvalidError(resource.PointerOf(curMD), "updater changed the version from %s to %s", curMD.Version(), md.Version())
	}
	md.ReplaceOwner(curMD.Owner())
	return upd, nil
}

// ownedUpdater is a core that can store the resource an Update is given
// as is, without a copy, when the caller gives it up (the inmem state):
// Modify then stores the copy fn changed, which nobody else holds,
// instead of a copy of it. Its options come applied (o), not as option
// functions to apply again.
type ownedUpdater interface {
	UpdateOwned(ctx context.Context, r resource.Resource, o UpdateOptions) error
	// CreateOwned is Create of r given up, with the options o.
	CreateOwned(ctx context.Context, r resource.Resource, o CreateOptions) error
}

// updateGiven is Update of r, a copy of the helper's own that it gives up,
// with the options o (opts applied): stored as is when the core is an
// ownedUpdater.
func (w *coreWrapper) updateGiven(ctx context.Context, r resource.Resource, o UpdateOptions, opts []UpdateOption) error {
	if ou, ok := w.CoreState.(ownedUpdater); ok {
		return ou.UpdateOwned(ctx, r, o)
	}
	return w.Update(ctx, r, opts...)
}

// CreateGiven is Create for a caller that gives r up: it keeps no
// reference to r once the call returned, and never changes it again. Over
// a core that can keep what it is given (see ownedUpdater) r itself is
// stored, saving a copy; other cores are called with Create. It is not
// part of [State]: the Runtime calls it for the outputs its generic
// controllers create from a resource they made for the write.
func (w *coreWrapper) CreateGiven(ctx context.Context, r resource.Resource, opts ...CreateOption) error {
	if ou, ok := w.CoreState.(ownedUpdater); ok {
		return ou.CreateOwned(ctx, r, opt.ApplyPooled(&createOptions, CreateOptions{}, opts))
	}
	return w.Create(ctx, r, opts...)
}

// createOptions lends CreateGiven its options value.
var createOptions opt.Pool[CreateOptions]

// updateOwnedBy is updateGiven of r with the stored owner kept (owner)
// and any phase expected; the option functions for a core that is not
// an ownedUpdater are built only for it (they are an allocation).
func (w *coreWrapper) updateOwnedBy(ctx context.Context, r resource.Resource, owner resource.Owner) error {
	if ou, ok := w.CoreState.(ownedUpdater); ok {
		return ou.UpdateOwned(ctx, r, UpdateOptions{Owner: owner})
	}
	return w.Update(ctx, r, WithUpdateOwner(owner), WithExpectedPhaseAny())
}

// updateOnce applies fn to a copy of cur (a read-only snapshot, rule S7)
// and writes the result. It returns the caller's copy of the resource as
// stored: the updated copy, which equals cur when nothing changed. With
// give, the copy is given to the core when it is an ownedUpdater: it is
// then the stored snapshot itself, which the caller must not change.
//
// The copy goes into g.into only when the write can succeed as far as cur
// tells (its owner and phase): a caller that retries after a phase
// conflict (a generic controller, once the tearing-down output is gone)
// finds g.into as it gave it.
func (w *coreWrapper) updateOnce(ctx context.Context, cur resource.Resource, fn func(resource.Resource) error, o UpdateOptions, opts []UpdateOption, g giving) (resource.Resource, error) {
	into := g.into
	if into != nil && checkWritable(cur, o) != nil {
		into = nil
	}
	upd, err := applyUpdater(cur, fn, into)
	if err != nil {
		return nil, err
	}
	if resource.Equal(cur, upd) {
		if err := checkWritable(cur, o); err != nil {
			return nil, err
		}
		return upd, nil
	}
	if g.give {
		err = w.updateGiven(ctx, upd, o, opts)
	} else {
		err = w.Update(ctx, upd, opts...)
	}
	if err != nil {
		return nil, err
	}
	return upd, nil
}

// UpdateWithConflicts implements [State.UpdateWithConflicts].
func (w *coreWrapper) UpdateWithConflicts(ctx context.Context, ptr resource.Pointer, updater UpdaterFunc, opts ...UpdateOption) (resource.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if updater == nil {
		return nil, NewInvalidError(resource.PointerOf(ptr), "nil updater")
	}
	o := applyUpdateOptions(opts)
	for {
		if ctx.Err() != nil {
			return nil, stopped(ctx, "update", ptr)
		}
		cur, _, err := w.coreGet(ctx, ptr) // copied once, by applyUpdater
		if err != nil {
			return nil, err
		}
		res, err := w.updateOnce(ctx, cur, updater, o, opts, giving{})
		if isVersionConflict(err) {
			continue
		}
		return res, err
	}
}

// Modify implements [State.Modify]: the state stores a copy of the
// resource fn changed (rule S7), which fn may keep.
func (w *coreWrapper) Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...UpdateOption) error {
	_, err := w.modify(ctx, emptyResource, fn, opts, giving{})
	return err
}

// ModifyGiven is Modify for a caller whose fn gives up the resource it is
// handed: it keeps no reference to it once it returned, and the resource
// fn changed is stored as is when the core can (see ownedUpdater), saving
// a copy. It is not part of [State]: the Runtime calls it for its
// controllers' Modify (their contract says fn keeps nothing), and a state
// that lacks it is called with Modify.
func (w *coreWrapper) ModifyGiven(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...UpdateOption) error {
	_, err := w.modify(ctx, emptyResource, fn, opts, giving{give: true})
	return err
}

// ModifyGivenInto is ModifyGiven for a caller that gives up emptyResource
// too (a resource it made for this call): it keeps no reference to it and
// never reads or changes it again. The copy of the stored resource fn
// changes is then made in emptyResource's storage when the resource can
// copy itself there (typed resources), saving an allocation; otherwise
// it is ModifyGiven. It is not part of [State]: the Runtime calls it for
// the outputs its generic controllers write.
func (w *coreWrapper) ModifyGivenInto(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...UpdateOption) error {
	_, err := w.modify(ctx, emptyResource, fn, opts, giving{give: true, into: emptyResource})
	return err
}

// giving says what the caller of a helper gives up: give, the resource
// fn changed (see ModifyGiven); into, when not nil, a resource whose
// storage the copy fn changes may take (see ModifyGivenInto).
type giving struct {
	give bool
	into resource.Resource
}

// ModifyWithResult implements [State.ModifyWithResult].
func (w *coreWrapper) ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...UpdateOption) (resource.Resource, error) {
	return w.modify(ctx, emptyResource, fn, opts, giving{})
}

// modify is Modify and ModifyWithResult; g.give gives the resource fn
// changed to the core to store (Modify: nobody gets it back), g.into the
// storage of the copy fn changes (see ModifyGivenInto).
func (w *coreWrapper) modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts []UpdateOption, g giving) (resource.Resource, error) {
	// The resource's metadata is its pointer: a PointerKey would be
	// boxed into the Pointer of every call below (an allocation).
	ptr, err := ValidateResource(emptyResource)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, NewInvalidError(resource.PointerOf(ptr), "nil modify function")
	}
	o := applyUpdateOptions(opts)
	for {
		if ctx.Err() != nil {
			return nil, stopped(ctx, "modify", ptr)
		}
		cur, _, err := w.coreGet(ctx, ptr) // copied once, by applyUpdater
		switch {
		case IsNotFoundError(err):
			res, err := w.createModified(ctx, emptyResource, fn, o, g.give)
			if IsConflictError(err) {
				// Created by someone else since the Get: update it instead.
				continue
			}
			return res, err
		case err != nil:
			return nil, err
		}
		res, err := w.updateOnce(ctx, cur, fn, o, opts, g)
		if isVersionConflict(err) || IsNotFoundError(err) {
			// Changed or destroyed since the Get: start over.
			continue
		}
		return res, err
	}
}

// createModified applies fn to a copy of emptyResource and creates it with
// the owner from the update options. With give, the copy is given to the
// core when it is an ownedUpdater (see updateOnce).
func (w *coreWrapper) createModified(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, o UpdateOptions, give bool) (resource.Resource, error) {
	r, err := DeepCopyOf(emptyResource)
	if err != nil {
		return nil, err
	}
	if err := fn(r); err != nil {
		return nil, err
	}
	if !sameIdentity(r.Metadata(), emptyResource.Metadata()) {
		return nil, NewInvalidError(resource.PointerOf(emptyResource.Metadata()), "modify function changed the identity to %s", resource.PointerString(r.Metadata()))
	}
	// The state stores the owner from the options; keep the result in step.
	md := r.Metadata()
	md.ReplaceOwner(o.Owner)
	if ou, ok := w.CoreState.(ownedUpdater); ok && give {
		err = ou.CreateOwned(ctx, r, CreateOptions{Owner: o.Owner})
	} else {
		err = w.Create(ctx, r, WithCreateOwner(o.Owner))
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// stopped is the error of a helper whose context ended before one of its
// attempts (the first, or a retry after a conflict): the context's cause
// (errors.Is finds it), naming the operation and the resource.
func stopped(ctx context.Context, op string, ptr resource.Pointer) error {
	return fmt.Errorf("state: %s %s: %w", op, resource.PointerString(ptr), context.Cause(ctx))
}
