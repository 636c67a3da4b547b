package transform

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/xform"
	"github.com/resgraph/resgraph/pkg/internal/cast"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// runState is what one Run remembers between its passes; only the Run
// goroutine uses it. A new Run (after a restart) starts from scratch, so
// its first pass is a full one.
type runState struct {
	// entries are the inputs seen, sorted by ID (inputs all live in one
	// kind): a pass merges them with the listed inputs, which List sorts
	// by ID too (rule S12a), so the controller's memory of an input is a
	// slot of a slice, found without hashing. They hold no pointer (see
	// idKey): the collector does not scan them.
	entries []entry
	// ids holds the entries' IDs that do not fit in their keys.
	ids idArena
	// pending are the outputs (by ID, in the output kind) that lost their
	// input and still have to be destroyed.
	pending map[resource.ID]struct{}
	// retries are the failing inputs and pending outputs, retried on their
	// own schedule.
	retries *xform.Retries[item]
	// pass counts the passes; 0 before the first one.
	pass uint64
	// orphansChecked: the outputs that belong to no input were looked for
	// (once per Run, in the first pass where every input's output was
	// known).
	orphansChecked bool
	// notDone are the inputs whose entry is not done (failing, or
	// waiting for an output to go): an incremental pass processes them
	// with the inputs that changed.
	notDone map[resource.ID]struct{}
	// changes is the last batch taken from the Runtime's change log
	// (reused by the next), nil before the first.
	changes *changelog.Batch
	// logSize is the limit last asked of the change log (sizeLog).
	logSize int
	// outs are the output IDs of the entries whose output has an ID of
	// its own (outOther), by input ID.
	outs map[resource.ID]resource.ID
}

// item is what fails and is retried: an input, or a pending output.
type item struct {
	id     resource.ID
	output bool
}

// entry is what the controller knows about one input: 40 bytes and no
// pointer, since a controller keeps one per input for as long as it runs
// (the collector does not scan the entries). Its output's ID is found with
// runState.outOf: it is the input's own ID for most controllers, and is
// then not stored twice.
type entry struct {
	// key is the input's ID (see idKey).
	key idKey
	// created (UnixNano) and version identify the input as it was last
	// processed: versions start over when an input is created again.
	created int64
	version resource.Version
	// out says where the ID of the input's output is (see outWhere).
	out outWhere
	// done: the input was fully processed at version/created; it is
	// skipped until it changes. Unset while waiting for an old output to
	// go away, and while failing.
	done bool
	// unmapped: the input's output is unknown (its mapping failed).
	unmapped bool
	// claimed: the current pass wrote out for this input (an output
	// pending destruction that an input claims is kept).
	claimed bool
}

// outWhere says where an entry's output ID is.
type outWhere uint8

const (
	// outNone: the input has no output.
	outNone outWhere = iota
	// outSame: the output's ID is the input's.
	outSame
	// outOther: the output's ID is runState.outs[input ID].
	outOther
)

// outOf returns the ID of e's output, "" when its input has none, as a
// string to keep: when it is the input's own, in, the input's ID (or a
// copy of e's when in is "": only e holds it).
func (rs *runState) outOf(e *entry, in resource.ID) resource.ID {
	switch e.out {
	case outSame:
		if in != "" {
			return in
		}
		return rs.ids.clone(&e.key)
	case outOther:
		return rs.outs[rs.ids.view(&e.key)]
	}
	return ""
}

// outView returns the ID of e's output, "" when its input has none: when
// it is the input's own ID, a view of e's key (see idArena.view), not to
// be kept.
func (rs *runState) outView(e *entry) resource.ID {
	switch e.out {
	case outSame:
		return rs.ids.view(&e.key)
	case outOther:
		return rs.outs[rs.ids.view(&e.key)]
	}
	return ""
}

// setOut records id ("": none) as the ID of e's output.
func (rs *runState) setOut(e *entry, id resource.ID) {
	in := rs.ids.view(&e.key)
	if e.out == outOther && id != rs.outs[in] {
		delete(rs.outs, in)
	}
	switch id {
	case "":
		e.out = outNone
	case in:
		e.out = outSame
	default:
		if e.out != outOther || rs.outs[in] != id {
			rs.outs[strings.Clone(in)] = id
		}
		e.out = outOther
	}
}

// newRunState returns the state of a new Run, whose context is ctx.
func newRunState(ctx context.Context) *runState {
	return &runState{
		pending: map[resource.ID]struct{}{}, notDone: map[resource.ID]struct{}{}, outs: map[resource.ID]resource.ID{},
		retries: xform.NewRetries[item](ctx),
	}
}

// pass is one reconcile pass.
type pass[I, O typed.ResourceWithDefinition] struct {
	ctx    context.Context
	c      *Controller[I, O]
	r      controller.Runtime
	logger *zap.Logger
	// retryLog logs the failures retried later.
	retryLog *zap.Logger
	rs       *runState
	now      time.Time
	// full: the first pass of a Run, which transforms every input.
	full bool
	// all: the pass transforms every input, changed or not (a full pass,
	// or an event pass of a controller with extra inputs).
	all bool
	// unknown: a listed resource could not even be read as an I, so its
	// output is unknown.
	unknown bool
	// apply is the function of the pass's output writes (one after the
	// other: made once per pass, not once per write).
	apply xform.Applier[I, O]
	// incremental: the pass processed the inputs of processed (sorted)
	// alone, not every input.
	incremental bool
	processed   []resource.ID
}

// reconcile runs one pass, woken up by an event (or else by a due retry).
// Failures of single inputs and outputs are retried on their own schedule
// and do not fail the pass; listing the inputs or the outputs does.
func (c *Controller[I, O]) reconcile(ctx context.Context, r controller.Runtime, logger, retryLog *zap.Logger, rs *runState, event bool) error {
	full := rs.pass == 0
	p := &pass[I, O]{
		ctx: ctx, c: c, r: r, logger: logger, retryLog: retryLog, rs: rs, now: time.Now(),
		full: full, all: full || (event && !c.skipUnchanged()),
	}
	rs.pass++
	ids, incremental := p.changed()
	p.incremental, p.processed = incremental, ids
	if incremental {
		done, err := p.changes(ids)
		if err != nil || !done {
			return err // stopping, or failing: the rest is the next Run's
		}
	} else {
		list, err := c.listInputs(ctx, r)
		if err != nil {
			return fmt.Errorf("list inputs %s: %w", resource.KindString(c.inKind), err)
		}
		if !p.merge(list.Items) {
			return nil // stopping: the rest is the next Run's
		}
	}
	if err := p.findOrphans(); err != nil {
		return err
	}
	p.destroyPending()
	return nil
}

// filterInController reports whether the input list options are applied by
// the controller instead of by List: with input finalizers, an input that
// stops matching must still be seen, to give its finalizer back.
func (c *Controller[I, O]) filterInController() bool {
	return c.opts.inputFinalizers.On() && len(c.opts.listOptions) > 0
}

// listInputs lists the inputs as the state's read-only snapshots (rule
// S7): no copy per pass, and TransformFunc gets them read-only.
func (c *Controller[I, O]) listInputs(ctx context.Context, r controller.Reader) (resource.List, error) {
	opts := []state.ListOption{state.WithReadOnlyList()}
	if !c.filterInController() {
		opts = append(opts, c.opts.listOptions...)
	}
	return r.List(ctx, c.inKind, opts...)
}

// matches reports whether the input is selected by the list options.
func (c *Controller[I, O]) matches(md *resource.Metadata) bool {
	if !c.filterInController() {
		return true // List applied them
	}
	return c.filter.LabelQueries.Matches(*md.Labels()) && c.filter.IDQuery.Matches(md.ID())
}

// skipUnchanged reports whether an input that did not change since it was
// processed may be skipped: not when TransformFunc may read extra inputs.
func (c *Controller[I, O]) skipUnchanged() bool { return len(c.opts.extraInputs) == 0 }

func (c *Controller[I, O]) outPointer(id resource.ID) resource.Pointer {
	return resource.NewPointer(c.outKind.Namespace(), c.outKind.Type(), id)
}

// mapOutput maps an input to its output; ok is false for None.
func (c *Controller[I, O]) mapOutput(logger *zap.Logger, in I) (out O, ok bool, err error) {
	return c.mapping().Map(logger, in)
}

// failed schedules the retry of it, the resource ptr, which failed with
// err, and logs and reports the failure. An input whose failed runs reach
// the retry policy's MaxAttempts is parked until it changes; an output
// that cannot be destroyed is retried until it goes.
func (p *pass[I, O]) failed(it item, ptr resource.Pointer, err error) {
	if p.ctx.Err() != nil {
		return // stopping: not a failure of the item
	}
	rt := p.rs.retries.Failed(it, p.now, err, !it.output)
	what := "input"
	if it.output {
		what = "output"
	}
	xform.RetryLater(p.retryLog, p.r, what, ptr, err, rt)
}

// due reports whether the listed input md, known as e, is to be processed
// in this pass: it changed, it is due for a retry, it waits for an output
// to go, or the pass transforms every input. A failing input waits out its
// backoff (or, parked, for a change) unless it changed; a change is
// applied to its retry (see xform.Retries.Changed).
func (p *pass[I, O]) due(md *resource.Metadata, e entry, known bool) bool {
	it := item{id: md.ID()}
	if p.all || !known || !e.version.Equal(md.Version()) || e.created != md.Created().UnixNano() {
		p.rs.retries.Changed(it)
		return true
	}
	if failing, due := p.rs.retries.Waiting(it, p.now); failing {
		return due
	}
	return !e.done
}

// merge processes the listed inputs (sorted by ID) against the inputs
// known (entries, sorted by ID): each listed input with its entry, a new
// one with a new entry, and the entries of inputs no longer listed are
// swept. It returns false when the pass stopped early (ctx done): the
// entries are then kept as they were for those not processed.
//
// The entries are rewritten in place while that never overwrites one not
// read yet (a new input past the last known one is appended in place);
// otherwise they move to a slice of their own. A list longer than the
// entries' capacity gets one a quarter as long again (as append grows a
// large slice), so that a burst of creates costs a few copies and leaves
// at most a quarter of the entries' memory unused; a later pass that does
// not grow them trims the slack to an eighth.
func (p *pass[I, O]) merge(items []resource.Resource) bool {
	if !sortedByID(items) {
		slices.SortFunc(items, byID) // List sorts by ID (S12a): a foreign state may not
	}
	old := p.rs.entries
	next, moved := old[:0], false
	grew := cap(old) < len(items)
	if grew {
		next, moved = make([]entry, 0, len(items)+len(items)/4), true
	}
	j := 0
	stopped := false
	for _, res := range items {
		if p.ctx.Err() != nil {
			stopped = true
			break
		}
		id := res.Metadata().ID()
		for j < len(old) && p.rs.ids.view(&old[j].key) < id {
			p.sweep(&old[j], "")
			j++
		}
		var e entry
		known := j < len(old) && p.rs.ids.view(&old[j].key) == id
		if known {
			e = old[j]
			j++
		} else {
			e.key = p.rs.ids.key(id)
		}
		if !moved && len(next) == j && j < len(old) {
			// Writing here would overwrite the next entry to read.
			next, moved = append(make([]entry, 0, cap(old)), next...), true
		}
		p.input(res, &e, known)
		next = append(next, e)
	}
	if stopped {
		next = append(next, old[j:]...)
	} else {
		for i := j; i < len(old); i++ {
			p.sweep(&old[i], "")
		}
	}
	if !moved && len(next) < len(old) {
		clear(old[len(next):]) // the strings of entries gone
	}
	if !grew && cap(next)-len(next) > len(next)/4 {
		next = append(make([]entry, 0, len(next)+len(next)/8), next...)
	}
	p.rs.entries = next
	p.rs.ids.compact(next)
	return !stopped
}

// byID orders resources by ID.
func byID(a, b resource.Resource) int { return strings.Compare(a.Metadata().ID(), b.Metadata().ID()) }

// sortedByID reports whether items are sorted by ID.
func sortedByID(items []resource.Resource) bool {
	prev := ""
	for i, r := range items {
		id := r.Metadata().ID()
		if i > 0 && id <= prev {
			return false
		}
		prev = id
	}
	return true
}

// input processes one listed input, whose entry is e (known: the input
// was known before this pass).
func (p *pass[I, O]) input(res resource.Resource, e *entry, known bool) {
	defer p.rs.track(res.Metadata().ID(), e)
	e.claimed = false
	in, err := cast.To[I](res)
	if err != nil {
		// Not an I: its output is unknown. The entry lets the sweep forget
		// its retries once it is gone.
		p.unknown = true
		p.rs.setOut(e, "")
		*e = entry{key: e.key, unmapped: true}
		p.failed(item{id: res.Metadata().ID()}, resource.PointerOf(res.Metadata()), err)
		return
	}
	md := in.Metadata()
	if !p.due(md, *e, known) {
		return
	}
	e.done = false
	e.version, e.created = md.Version(), md.Created().UnixNano()
	active := p.c.matches(md) && (md.Phase() == resource.PhaseRunning || p.c.opts.ignoreTearingDown || p.c.gated(md))
	if active {
		err = p.active(in, e)
	} else {
		err = p.release(in, e)
	}
	it := item{id: md.ID()}
	if err != nil {
		p.failed(it, md, err)
	} else {
		p.rs.retries.Done(it)
	}
}

// active brings the output of an input that should have one up to date.
func (p *pass[I, O]) active(in I, e *entry) error {
	inID := in.Metadata().ID()
	out, ok, err := p.c.mapOutput(p.logger, in)
	e.unmapped = err != nil
	if err != nil {
		return err
	}
	if !ok {
		p.retire(e, inID)
		return p.releaseFinalizer(in, e)
	}
	outID := out.Metadata().ID()
	// In an incremental pass, an input without a known output most likely
	// has none: the write may try a Create first.
	absent := !p.full && e.out == outNone
	if cur := p.rs.outView(e); cur != "" && cur != outID {
		p.retire(e, inID)
	}
	p.rs.setOut(e, outID)
	e.claimed = true
	return p.write(in, out, e, absent)
}

// retire schedules the destruction of the input's current output (in:
// the input's ID, see outOf).
func (p *pass[I, O]) retire(e *entry, in resource.ID) {
	if out := p.rs.outOf(e, in); out != "" {
		p.rs.pending[out] = struct{}{}
		p.rs.setOut(e, "")
	}
}

// write brings the output up to date (xform.Write: input finalizer,
// output, extra outputs, and the finalizer's release for a tearing-down
// input). absent says the output most likely does not exist. An output
// whose previous incarnation is still tearing down is not written: the
// input stays not done, and the destroy-ready event of that output brings
// the controller back.
func (p *pass[I, O]) write(in I, out O, e *entry, absent bool) error {
	c := p.c
	md := in.Metadata()
	w := xform.Write[I, O]{
		In: in, Out: out, Absent: absent, Name: c.settings.Name, Finalizer: c.ownFinalizer(),
		Transform: c.settings.TransformFunc, Extra: c.settings.TransformExtraOutputFunc, FinalizerRemoval: c.settings.removal(),
		Applier: &p.apply, Gated: c.gated(md) && !c.opts.ignoreTearingDown,
	}
	done, err := w.Run(p.ctx, p.r, p.logger)
	if done.FinalizerAdded {
		// The controller's own write: not a change to process again, even
		// if the rest fails (see finish).
		e.version = md.Version().Next()
	}
	if err != nil || done.Waiting {
		return err
	}
	if done.DestroyOutput {
		// As if the input were gone: the output is destroyed with the
		// pass's pending outputs, and the input keeps its finalizer.
		p.retire(e, md.ID())
		e.claimed = false
		if md.Phase() == resource.PhaseTearingDown && !w.Gated {
			return p.release(in, e)
		}
	}
	p.finish(e, md, done.FinalizerRemoved)
	return nil
}

// release destroys the outputs of an input that should have none (tearing
// down, or no longer selected), then gives its finalizer back.
func (p *pass[I, O]) release(in I, e *entry) error {
	out, ok, err := p.c.mapOutput(p.logger, in)
	e.unmapped = err != nil
	if err != nil {
		return err
	}
	ids := []resource.ID{p.rs.outOf(e, in.Metadata().ID())}
	if ok && out.Metadata().ID() != ids[0] {
		ids = append(ids, out.Metadata().ID())
	}
	gone := true
	for _, id := range ids {
		if id == "" {
			continue
		}
		ptr := p.c.outPointer(id)
		g, err := xform.RemoveOutput(p.ctx, p.r, ptr)
		if err != nil {
			return xform.Named("destroy output", ptr, err)
		}
		gone = gone && g
	}
	if !gone {
		return nil // destroy-ready outputs wake the controller up
	}
	p.rs.setOut(e, "")
	return p.releaseFinalizer(in, e)
}

// releaseFinalizer removes the controller's finalizer from the input, if
// it holds one and FinalizerRemovalFunc agrees, and marks the input done.
func (p *pass[I, O]) releaseFinalizer(in I, e *entry) error {
	removed := false
	if s := p.c.settings; p.c.opts.inputFinalizers.On() {
		var err error
		if removed, err = xform.ReleaseFinalizer(p.ctx, p.r, p.logger, s.Name, in, s.removal()); err != nil {
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

// sweep retires the output of an input that is no longer listed, e its
// entry, which the pass drops (its ID is dead in the arena); in is the
// input's ID, "" when only e holds it (see outOf).
func (p *pass[I, O]) sweep(e *entry, in resource.ID) {
	p.retire(e, in)
	id := p.rs.ids.view(&e.key)
	p.rs.retries.Done(item{id: id})
	delete(p.rs.notDone, id)
	p.rs.ids.drop(&e.key)
}

// claimed returns the outputs the pass wrote for their inputs (the
// entries it processed that are claimed): an output pending destruction
// that an input claims is kept. It is asked only while outputs are
// pending, so that a pass keeps no list of its writes. The IDs are views
// (see outView), read before the entries change.
func (p *pass[I, O]) claimed() []resource.ID {
	var outs []resource.ID
	add := func(e *entry) {
		if e.claimed {
			outs = append(outs, p.rs.outView(e))
		}
	}
	if !p.incremental {
		for i := range p.rs.entries {
			add(&p.rs.entries[i])
		}
		return outs
	}
	at := 0
	for _, id := range p.processed {
		// An entry not processed keeps the flag of an earlier pass.
		i, ok := seek(&p.rs.ids, p.rs.entries, at, id)
		if ok {
			add(&p.rs.entries[i])
		}
		at = i
	}
	return outs
}

// destroyPending tears down and destroys the outputs that lost their
// input, in the order of their IDs (the same inputs give the same writes
// in the same order); those with finalizers stay pending, tearing down,
// until they are destroy-ready. An output that failed to be destroyed
// waits out its backoff (except in the full pass of a new Run).
func (p *pass[I, O]) destroyPending() {
	if len(p.rs.pending) == 0 {
		return
	}
	for _, out := range p.claimed() {
		if _, ok := p.rs.pending[out]; ok {
			delete(p.rs.pending, out) // an input took it over
			p.rs.retries.Done(item{id: out, output: true})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.rs.pending)) {
		it := item{id: id, output: true}
		if failing, due := p.rs.retries.Waiting(it, p.now); failing && !due && !p.full {
			continue
		}
		ptr := p.c.outPointer(id)
		gone, err := xform.RemoveOutput(p.ctx, p.r, ptr)
		switch {
		case err != nil:
			p.failed(it, ptr, err)
		case gone:
			delete(p.rs.pending, id)
			p.rs.retries.Done(it)
		default:
			p.rs.retries.Done(it) // waits for its finalizers
		}
	}
}

// findOrphans, once per Run and as soon as every input's output is known,
// makes the controller's outputs that belong to no input pending (an
// earlier Run may have left them, or a mapping may have changed while no
// Runtime ran).
func (p *pass[I, O]) findOrphans() error {
	if p.rs.orphansChecked {
		return nil
	}
	if p.unknown {
		p.logger.Debug("an input could not be read: looking for orphan outputs later")
		return nil
	}
	owned := map[resource.ID]struct{}{} // views of the entries' IDs, read before they change
	for i := range p.rs.entries {
		e := &p.rs.entries[i]
		if e.unmapped {
			p.logger.Debug("an input's output is unknown: looking for orphan outputs later")
			return nil
		}
		if out := p.rs.outView(e); out != "" {
			owned[out] = struct{}{}
		}
	}
	c := p.c
	list, err := p.r.List(p.ctx, c.outKind, state.WithReadOnlyList())
	if err != nil {
		return fmt.Errorf("list outputs %s: %w", resource.KindString(c.outKind), err)
	}
	for _, out := range list.Items {
		md := out.Metadata()
		if _, ok := owned[md.ID()]; !ok && md.Owner() == c.settings.Name {
			p.rs.pending[md.ID()] = struct{}{}
		}
	}
	p.rs.orphansChecked = true
	return nil
}
