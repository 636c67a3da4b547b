package transform

import (
	"context"
	"errors"
	"fmt"

	"github.com/siderolabs/gen/optional"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/resource"
)

// runState is what one Run remembers between its passes; only the Run
// goroutine uses it. A new Run (after a restart) starts from scratch, so
// its first pass is a full one.
type runState struct {
	// entries are the inputs seen, by ID (inputs all live in one kind).
	entries map[resource.ID]entry
	// pending are the outputs (by ID, in the output kind) that lost their
	// input and still have to be destroyed.
	pending map[resource.ID]struct{}
	// pass counts the passes; 0 before the first one.
	pass uint64
}

// entry is what the controller knows about one input.
type entry struct {
	// created (UnixNano) and version identify the input as it was last
	// processed: versions start over when an input is created again.
	created int64
	version resource.Version
	// out is the ID of the input's output, "" when it has none.
	out resource.ID
	// seen is the last pass that listed the input.
	seen uint64
	// done: the input was fully processed at version/created; it is
	// skipped until it changes. Unset while waiting for an old output to
	// go away.
	done bool
}

func newRunState() *runState {
	return &runState{entries: map[resource.ID]entry{}, pending: map[resource.ID]struct{}{}}
}

// pass is one reconcile pass.
type pass[I, O generic.ResourceWithDefinition] struct {
	ctx    context.Context
	c      *Controller[I, O]
	r      controller.Runtime
	logger *zap.Logger
	rs     *runState
	// claimed are the outputs (by ID) of the inputs processed in this pass.
	claimed map[resource.ID]struct{}
	errs    []error
	// full: the first pass of a Run, which transforms every input and
	// cleans up the outputs that belong to no input.
	full bool
	// unknown: an input failed before its output was known, so the
	// orphan cleanup of a full pass must not run.
	unknown bool
}

// reconcile runs one pass and returns the joined failures.
func (c *Controller[I, O]) reconcile(ctx context.Context, r controller.Runtime, logger *zap.Logger, rs *runState) error {
	p := &pass[I, O]{ctx: ctx, c: c, r: r, logger: logger, rs: rs, full: rs.pass == 0, claimed: map[resource.ID]struct{}{}}
	rs.pass++
	// Every pass restarts the tracking, so that the engine's record of
	// written outputs holds one pass's writes, not every output ever
	// written; only a full pass cleans up with it.
	r.StartTrackingOutputs()
	list, err := c.listInputs(ctx, r)
	if err != nil {
		return fmt.Errorf("transform %q: list inputs %s: %w", c.settings.Name, resource.KindString(c.inKind), err)
	}
	for _, item := range list.Items {
		p.input(item)
	}
	p.sweep()
	p.destroyPending()
	if p.full {
		p.cleanupOrphans()
	}
	if len(p.errs) == 0 {
		return nil
	}
	return fmt.Errorf("transform %q: %w", c.settings.Name, errors.Join(p.errs...))
}

// filterInController reports whether the input list options are applied by
// the controller instead of by List: with input finalizers, an input that
// stops matching must still be seen, to give its finalizer back.
func (c *Controller[I, O]) filterInController() bool {
	return c.opts.inputFinalizers && len(c.opts.listOptions) > 0
}

func (c *Controller[I, O]) listInputs(ctx context.Context, r controller.Reader) (resource.List, error) {
	if c.filterInController() {
		return r.List(ctx, c.inKind)
	}
	return r.List(ctx, c.inKind, c.opts.listOptions...)
}

// matches reports whether the input is selected by the list options.
func (c *Controller[I, O]) matches(md *resource.Metadata) bool {
	if !c.filterInController() {
		return true // List applied them
	}
	return c.filter.LabelQuery.Matches(*md.Labels()) && c.filter.IDQuery.Matches(md.ID())
}

// skipUnchanged reports whether an input that did not change since it was
// processed may be skipped: not when TransformFunc may read extra inputs.
func (c *Controller[I, O]) skipUnchanged() bool { return len(c.opts.extraInputs) == 0 }

func (c *Controller[I, O]) outPointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(c.outKind.Namespace(), c.outKind.Type(), id)
}

// mapOutput maps an input to its output; ok is false for None.
func (c *Controller[I, O]) mapOutput(logger *zap.Logger, in I) (out O, ok bool, err error) {
	md := in.Metadata()
	name := "MapMetadataFunc"
	if f := c.settings.MapMetadataOptionalFunc; f != nil {
		name = "MapMetadataOptionalFunc"
		opt, err := xform.CallValue(logger, name, md, func() optional.Optional[O] { return f(in) })
		if err != nil {
			return out, false, err
		}
		if out, ok = opt.Get(); !ok {
			return out, false, nil
		}
	} else {
		out, err = xform.CallValue(logger, name, md, func() O { return c.settings.MapMetadataFunc(in) })
		if err != nil {
			return out, false, err
		}
	}
	if err := xform.CheckMapped(name, md, out, c.outKind); err != nil {
		return out, false, err
	}
	return out, true, nil
}

// fail records a failure of the resource ptr.
func (p *pass[I, O]) fail(what string, ptr resource.Pointer, err error) {
	p.errs = append(p.errs, fmt.Errorf("%s %s: %w", what, resource.PointerString(ptr), err))
}

// input processes one listed input.
func (p *pass[I, O]) input(item resource.Resource) {
	in, err := xform.As[I](item)
	if err != nil {
		p.errs = append(p.errs, err)
		p.unknown = true
		return
	}
	md := in.Metadata()
	e, known := p.rs.entries[md.ID()]
	e.seen = p.rs.pass
	if known && e.done && !p.full && p.c.skipUnchanged() && e.version.Equal(md.Version()) && e.created == md.Created().UnixNano() {
		p.rs.entries[md.ID()] = e
		return
	}
	e.done = false
	e.version, e.created = md.Version(), md.Created().UnixNano()
	active := p.c.matches(md) && (md.Phase() == resource.PhaseRunning || p.c.opts.ignoreTearingDown)
	if active {
		err = p.active(in, &e)
	} else {
		err = p.release(in, &e)
	}
	p.rs.entries[md.ID()] = e
	if err != nil {
		p.fail("input", md, err)
	}
}

// active brings the output of an input that should have one up to date.
func (p *pass[I, O]) active(in I, e *entry) error {
	out, ok, err := p.c.mapOutput(p.logger, in)
	if err != nil {
		p.unknown = true
		return err
	}
	if !ok {
		p.retire(e)
		return p.releaseFinalizer(in, e)
	}
	outID := out.Metadata().ID()
	// In an incremental pass, an input without a known output most likely
	// has none: the write may try a Create first.
	absent := !p.full && e.out == ""
	if e.out != "" && e.out != outID {
		p.retire(e)
	}
	e.out = outID
	p.claimed[outID] = struct{}{}
	waiting, err := p.write(in, out, e, absent)
	if p.full && (err != nil || waiting) {
		// Keep the output as it is: mark it written for CleanupOutputs.
		if terr := xform.Touch(p.ctx, p.r, out); terr != nil {
			err = errors.Join(err, fmt.Errorf("keep output: %w", terr))
		}
	}
	return err
}

// retire schedules the destruction of the input's current output.
func (p *pass[I, O]) retire(e *entry) {
	if e.out != "" {
		p.rs.pending[e.out] = struct{}{}
		e.out = ""
	}
}

// write adds the input finalizer if needed, writes the output and runs the
// extra output function. waiting means the output's previous incarnation
// is still tearing down. absent says the output most likely does not exist.
func (p *pass[I, O]) write(in I, out O, e *entry, absent bool) (waiting bool, err error) {
	c := p.c
	md := in.Metadata()
	name := c.settings.Name
	tearingDown := md.Phase() == resource.PhaseTearingDown // only with ignoreTearingDown
	bumped := false
	if c.opts.inputFinalizers && !tearingDown && !md.Finalizers().Has(name) {
		if err := p.r.AddFinalizer(p.ctx, md, name); err != nil {
			return false, fmt.Errorf("add finalizer: %w", err)
		}
		bumped = true
	}
	extra := c.settings.TransformExtraOutputFunc
	written, waiting, err := xform.WriteOutput(p.ctx, p.r, out, xform.TransformFunc(p.ctx, p.r, p.logger, in, c.settings.TransformFunc), extra != nil, absent)
	if err != nil {
		return false, fmt.Errorf("write output %s: %w", resource.PointerString(out.Metadata()), err)
	}
	if waiting {
		p.logger.Debug("output of a previous input is still tearing down", zap.String("output", resource.PointerString(out.Metadata())))
		return true, nil
	}
	if extra != nil {
		if err := xform.RunExtra(p.ctx, p.r, p.logger, in, written, extra); err != nil {
			return false, err
		}
	}
	if tearingDown && c.opts.inputFinalizers && md.Finalizers().Has(name) {
		return false, p.releaseFinalizer(in, e)
	}
	p.finish(e, md, bumped)
	return false, nil
}

// release destroys the outputs of an input that should have none (tearing
// down, or no longer selected), then gives its finalizer back.
func (p *pass[I, O]) release(in I, e *entry) error {
	out, ok, err := p.c.mapOutput(p.logger, in)
	if err != nil {
		return err
	}
	ids := []resource.ID{e.out}
	if ok && out.Metadata().ID() != e.out {
		ids = append(ids, out.Metadata().ID())
	}
	gone := true
	for _, id := range ids {
		if id == "" {
			continue
		}
		g, err := xform.RemoveOutput(p.ctx, p.r, p.c.outPointer(id))
		if err != nil {
			return fmt.Errorf("destroy output %s: %w", resource.PointerString(p.c.outPointer(id)), err)
		}
		gone = gone && g
	}
	if !gone {
		return nil // destroy-ready outputs wake the controller up
	}
	e.out = ""
	return p.releaseFinalizer(in, e)
}

// releaseFinalizer removes the controller's finalizer from the input, if
// it holds one and FinalizerRemovalFunc agrees, and marks the input done.
func (p *pass[I, O]) releaseFinalizer(in I, e *entry) error {
	removed := false
	if s := p.c.settings; p.c.opts.inputFinalizers {
		var err error
		if removed, err = xform.ReleaseFinalizer(p.ctx, p.r, p.logger, s.Name, in, s.FinalizerRemovalFunc); err != nil {
			return err
		}
	}
	p.finish(e, in.Metadata(), removed)
	return nil
}

// finish marks the input done. bumped says the controller changed the
// input's finalizers with one write, so the input's version is now the
// next one: that version is remembered, so the controller's own write does
// not make it process the input again. (A write by anyone else in between
// makes the version differ, and the input is processed again.)
func (p *pass[I, O]) finish(e *entry, md *resource.Metadata, bumped bool) {
	e.done = true
	if bumped {
		e.version = md.Version().Next()
	}
}

// sweep retires the outputs of the inputs that were not listed.
func (p *pass[I, O]) sweep() {
	for id, e := range p.rs.entries {
		if e.seen != p.rs.pass {
			if e.out != "" {
				p.rs.pending[e.out] = struct{}{}
			}
			delete(p.rs.entries, id)
		}
	}
}

// destroyPending tears down and destroys the outputs that lost their
// input; those with finalizers stay pending, tearing down, until they are
// destroy-ready.
func (p *pass[I, O]) destroyPending() {
	for id := range p.rs.pending {
		if _, ok := p.claimed[id]; ok {
			delete(p.rs.pending, id) // an input took it over
			continue
		}
		ptr := p.c.outPointer(id)
		gone, err := xform.RemoveOutput(p.ctx, p.r, ptr)
		switch {
		case err != nil:
			p.fail("destroy output", ptr, err)
		case gone:
			delete(p.rs.pending, id)
		}
	}
}

// cleanupOrphans, in a full pass, destroys the outputs that belong to no
// input with output tracking, and makes the ones it could only tear down
// (they have finalizers) pending, to be destroyed by later passes.
func (p *pass[I, O]) cleanupOrphans() {
	c := p.c
	if p.unknown {
		p.logger.Debug("an input failed before its output was known: skipping the cleanup of orphan outputs")
		return
	}
	if err := p.r.CleanupOutputs(p.ctx, c.outKind); err != nil {
		p.errs = append(p.errs, fmt.Errorf("clean up outputs: %w", err))
		return
	}
	list, err := p.r.List(p.ctx, c.outKind)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("list outputs: %w", err))
		return
	}
	for _, out := range list.Items {
		md := out.Metadata()
		if _, ok := p.claimed[md.ID()]; !ok && md.Owner() == c.settings.Name {
			p.rs.pending[md.ID()] = struct{}{}
		}
	}
}
