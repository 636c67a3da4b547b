package qrunner

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/runtime/internal/sched"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
)

// worker processes items until ctx is done, noting in busy when its item
// started. n is its number (from 1) when the workers are numbered
// (Runner.numbered), 0 otherwise: its items then run with its
// adapter.WorkerContext, and its trace records name it. The queue never
// hands out an item that is in flight (rule Q2).
func (c *Runner) worker(ctx context.Context, busy *atomic.Int64, n uint32) {
	wctx := ctx  // made once: an item's run allocates nothing for it
	var bx boxes // the pointers handed to Reconcile
	if n > 0 {
		wctx = adapter.WorkerContext(ctx, n)
	}
	for {
		var it work.Item
		var pending telemetry.Pending
		var slot queue.Slot
		var ok bool
		if c.picker != nil {
			it, pending, slot, ok = c.picked(ctx)
		} else {
			it, pending, slot, ok = c.queue.GetNoted(ctx)
		}
		if !ok {
			return
		}
		busy.Store(time.Now().UnixNano())
		if c.picker == nil && !c.cfg.Scheduler.Gate(ctx, sched.Gate{Kind: sched.GateItem, Controller: c.cfg.Name, Item: it.Ptr, Map: it.Map}) {
			return // the Runtime stops; the queue shuts down
		}
		ictx := c.cfg.Adapter.ItemStarted(wctx, it.Ptr)
		start := c.cfg.Telemetry.ItemStarted(it, &pending, n)
		var last work.Last
		if it.Map {
			last, _ = c.last.Get(it.Ptr)
			if last.Gone { // its last version is handed to MapInput
				c.cfg.Adapter.Snapshots().Hand(last.Res)
			}
			if last.Prev != nil { // and its previous one
				c.cfg.Adapter.Snapshots().Hand(last.Prev)
			}
		}
		o := c.call(ictx, it, bx.box(it.Ptr), last, start)
		if ctx.Err() != nil {
			// The Runtime is stopping: the queue is about to shut down.
			o = o.Stopping()
		}
		// The item leaves flight in done, before its outcome is
		// reported: finishing keeps the controller busy until it is.
		c.finishing.Add(1)
		c.done(it, slot, last, start, o)
		busy.Store(0)
		c.checkSnapshots()
		c.finishing.Add(-1)
		if !c.caughtUp.Load() {
			c.checkCaughtUp()
		}
		c.cfg.Idle.Ping()
	}
}

// picked takes the item the scheduler picks (sched.Picker) among the
// queue's due items, picking again when it is no longer due as the worker
// takes it; ok is false when ctx is done.
func (c *Runner) picked(ctx context.Context) (it work.Item, n telemetry.Pending, s queue.Slot, ok bool) {
	for {
		ptr, mapItem, ok := c.picker.Pick(ctx, sched.Pick{Controller: c.cfg.Name, Due: c.due})
		if !ok {
			return it, n, s, false
		}
		it = work.Item{Ptr: ptr, Map: mapItem}
		if n, s, ok = c.queue.TakeNoted(it); ok {
			return it, n, s, true
		}
	}
}

// due lists the queue's due items for a sched.Picker.
func (c *Runner) due(yield func(item resource.PointerKey, mapItem bool) bool) {
	c.queue.Due(func(it work.Item) bool { return yield(it.Ptr, it.Map) })
}

// done acts on the outcome of item it as the Runtime's outcome switch
// decides: the queue's result, the status, the telemetry and the log line
// (rule Q3).
func (c *Runner) done(it work.Item, slot queue.Slot, last work.Last, start telemetry.Stamp, o outcome.Outcome) {
	call := outcome.Reconcile
	if it.Map {
		call = outcome.MapInput
	}
	d := outcome.Decide(call, o)
	var r queue.Result
	switch d.Action {
	case outcome.Retry:
		r = queue.Failure()
	case outcome.Park:
		r = queue.Denied()
	case outcome.Requeue:
		if d.Failure {
			r = queue.RequeueAfterFailure(o.Interval)
		} else {
			r = queue.RequeueAfter(o.Interval)
		}
	default:
		r = queue.Success()
	}
	if d.Failure {
		r = r.WithError(o.Msg)
	}
	// One clock reading ends the item: for its note, when it stays
	// queued, and for its telemetry.
	var settle func(*telemetry.Pending, queue.Completion)
	end := c.cfg.Telemetry.Now(nil)
	if c.cfg.Telemetry != nil {
		settle = func(p *telemetry.Pending, comp queue.Completion) { p.Settled(end, comp.Delay) }
	}
	comp := c.queue.CompleteNoted(it, slot, r, settle)
	if last.Held() && (d.Action == outcome.Done || comp.Parked) {
		// Its next run, if any, is queued by a change that records what
		// it needs.
		c.last.Release(it.Ptr, last.Seq())
	}
	td := d
	switch {
	case comp.Parked:
		td.Action = outcome.Park // not requeued
	case d.Action == outcome.Park:
		td.Action = outcome.Retry // changed while it ran: due now
	}
	c.cfg.Telemetry.ItemEnded(it, start, end, o, td, comp.Delay, comp.Attempts)
	if d.Failure {
		c.status.Failed(o.Text(it.What()))
	} else {
		c.status.Recover(c.stillFailing)
	}
	switch {
	case comp.Parked:
		outcome.LogParked(c.elog, call, o, d, comp.Attempts, zap.Stringer("item", it))
	case d.Log:
		// Only then: the item's field is an allocation.
		outcome.Log(c.elog, call, o, td, comp.Delay, zap.Stringer("item", it))
	}
}

// call runs the item's user code — Reconcile, or MapInput and the pointers
// it returned — and classifies its error, all inside one recovery: a panic
// fails that item only (rule Q5), and what comes out is plain data. ptr is
// it.Ptr as a resource.Pointer (see boxes).
func (c *Runner) call(ctx context.Context, it work.Item, ptr resource.Pointer, last work.Last, start telemetry.Stamp) (o outcome.Outcome) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			o = outcome.OfPanic(p)
		}
	}()
	if it.Map {
		return c.mapItem(ctx, it, ptr, last, start)
	}
	return outcome.OfItemError(c.cfg.Ctrl.Reconcile(ctx, c.logger, c.cfg.Adapter, ptr))
}

// mapItem calls MapInput and queues the primary pointers it returns (rule
// Q4). A destroyed input (last.Gone) reaches MapInput as a
// controller.DestroyedInput with its last version; an input whose
// metadata changed since its last MapInput (last.Prev) as a
// controller.ChangedInput, or a DestroyedInput, with its previous version
// (rule Q4, extended). Pointers of a kind that is not a primary input (or nil, or without
// an ID) fail the item, logged once per kind with the offending pointer;
// the valid ones are queued anyway. The pointers' methods are user code:
// mapItem runs inside the recovery of call. ptr is it.Ptr as a
// resource.Pointer.
func (c *Runner) mapItem(ctx context.Context, it work.Item, ptr resource.Pointer, last work.Last, start telemetry.Stamp) outcome.Outcome {
	in := ptr
	switch {
	case last.Gone && last.Prev != nil:
		in = controller.NewDestroyedInput(last.Res).WithPrevious(last.Prev)
	case last.Gone:
		in = controller.NewDestroyedInput(last.Res)
	case last.Prev != nil:
		in = controller.NewChangedInput(it.Ptr, last.Prev)
	}
	ptrs, err := c.cfg.Ctrl.MapInput(ctx, c.logger, c.cfg.Adapter, in)
	if err != nil {
		return outcome.OfItemError(err)
	}
	var buf [1]work.Item // MapInput mostly returns one pointer
	items := buf[:0]
	var bad []string
	for _, p := range ptrs {
		if usercode.IsNil(p) {
			bad = append(bad, nilPointer)
			c.logBadKind(it, resource.KindKey{}, nilPointer) // the zero key stands for nil
			continue
		}
		key := resource.PointerOf(p)
		if _, ok := c.primary[key.Kind()]; !ok || key.ID() == "" {
			bad = append(bad, key.String())
			c.logBadKind(it, key.Kind(), key.String())
			continue
		}
		items = append(items, work.Reconcile(key))
	}
	c.cfg.Telemetry.Mapped(start, items) // before they can start
	switch {
	case len(items) == 0:
	case c.cfg.Telemetry == nil:
		c.queue.AddBatch(items)
	default:
		now := c.cfg.Telemetry.Now(nil)
		c.queue.AddBatchNoted(items, func(_ int, p *telemetry.Pending) { p.Mapped(start, now) })
	}
	if len(bad) == 0 {
		return outcome.Success()
	}
	o := outcome.Failure("returned pointers that are not of a primary input kind: " + strings.Join(bad, ", "))
	o.Logged = true
	return o
}

// nilPointer is how a nil pointer returned by MapInput is reported.
const nilPointer = "<nil>"

// logBadKind logs, once per kind (and once for nil pointers, whose key is
// the zero key), that MapInput returned the pointer p of a kind that is
// not a primary input.
func (c *Runner) logBadKind(it work.Item, key resource.KindKey, p string) {
	c.badMu.Lock()
	_, seen := c.badKinds[key]
	c.badKinds[key] = struct{}{}
	c.badMu.Unlock()
	if !seen {
		c.elog.Error("MapInput returned a pointer that is not of a primary input kind",
			zap.Stringer("item", it), zap.String("pointer", p))
	}
}

// describeQueue says what a QController's queue holds, naming a sample of
// its items.
func describeQueue(st queue.Stats[work.Item]) string {
	var parts []string
	if st.InFlight > 0 {
		parts = append(parts, fmt.Sprintf("%d in flight (%s)", st.InFlight, itemList(st.Sample[:st.SampleInFlight], st.InFlight)))
	}
	if st.Due > 0 {
		parts = append(parts, fmt.Sprintf("%d due (%s)", st.Due, itemList(st.Sample[st.SampleInFlight:], st.Due)))
	}
	if st.Delayed > 0 {
		parts = append(parts, fmt.Sprintf("%d delayed, the next due at %s", st.Delayed, st.NextDue.Format(time.RFC3339Nano)))
	}
	return strings.Join(parts, "; ")
}

// itemList formats sampled queue items, noting how many more there are.
func itemList(items []work.Item, total int) string {
	s := make([]string, 0, len(items)+1)
	for _, it := range items {
		s = append(s, it.String())
	}
	if n := total - len(items); n > 0 {
		s = append(s, fmt.Sprintf("and %d more", n))
	}
	return strings.Join(s, ", ")
}
