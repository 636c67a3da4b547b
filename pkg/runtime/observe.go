package runtime

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/observe/hotloop"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/runtime/internal/telemetry"
)

// tracePollInterval is how often a running Runtime reads the new records of
// its trace, for the hot-loop detector and the trace hook.
const tracePollInterval = 100 * time.Millisecond

// loopState holds the hot loops flagged now, how many trace records
// their detector missed and what it could not count.
type loopState struct {
	// missed counts the records the trace poller never read (overwritten
	// first); dropped and incomplete are the detector's Stats.Dropped and
	// Stats.Incomplete as of the poller's last poll. Written by the poller
	// only.
	missed, dropped, incomplete atomic.Uint64

	mu sync.Mutex
	// active are the flagged loops; protected by mu.
	active []observe.HotLoop
}

// hotLoops returns the hot loops flagged now, sorted by their cycle (none
// with the trace off: the detector reads it).
func (r *Runtime) hotLoops() []observe.HotLoop { return r.loops.list() }

// list returns copies of the active loops.
func (ls *loopState) list() []observe.HotLoop {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]observe.HotLoop, 0, len(ls.active))
	for _, l := range ls.active {
		l.Controllers = slices.Clone(l.Controllers)
		out = append(out, l)
	}
	return out
}

// set makes loops the active ones.
func (ls *loopState) set(loops []observe.HotLoop) {
	ls.mu.Lock()
	ls.active = loops
	ls.mu.Unlock()
}

// pollTrace reads the trace every tracePollInterval, and whenever the ring
// says half of it was written since the last read, until ctx is done: it
// feeds the hot-loop detector and the trace hook.
func (r *Runtime) pollTrace(ctx context.Context) {
	o := tracePoller{
		ring:   r.tel.Ring,
		logger: r.logger,
		loops:  &r.loops,
		sinks:  r.sinks,
		det:    hotloop.New(r.opts.hotLoop),
		hook:   r.opts.traceHook,
		causes: map[string]trace.Ref{},
	}
	tk := time.NewTicker(tracePollInterval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			o.poll(time.Now()) // the hook gets every record up to the stop
			return
		case now := <-tk.C:
			o.pollAll(ctx, now)
		case <-o.ring.HalfFull():
			o.pollAll(ctx, time.Now())
		}
	}
}

// pollAll polls until less than half the ring was written since the last
// record read: the ring wakes the poller when half of it was written
// since its last read, so it overwrites a record only when the poller
// cannot keep up (see [trace.Ring.HalfFull]). It stops early once ctx is
// done (pollTrace then reads the rest).
func (o *tracePoller) pollAll(ctx context.Context, now time.Time) {
	o.poll(now)
	for o.ring.MarkRead(o.last) && ctx.Err() == nil {
		o.poll(time.Now())
	}
}

// tracePoller is the state of the goroutine that reads the trace, with
// what it needs of the Runtime: the trace's ring, the log, where the
// flagged loops go and the controllers' telemetry sinks.
type tracePoller struct {
	ring   *trace.Ring
	logger *zap.Logger
	loops  *loopState
	sinks  func() []*telemetry.Controller
	det    *hotloop.Detector
	hook   func([]trace.Record)
	// last is the sequence number of the last record read; fed that of
	// the last record fed to the detector (see feed).
	last, fed uint64
	buf       []trace.Record
	// causes are the causes of each controller's newest reconcile: a
	// commit is attributed to it (for a QController with several workers,
	// to the newest of its running reconciles: an approximation).
	causes map[string]trace.Ref
}

// poll reads the records recorded since the last poll. Without a hook it
// visits them in the ring, copying only the commits; with one it copies
// them all for the hook. It counts the records it missed (overwritten
// first) in loops.missed, and publishes the detector's Stats there.
func (o *tracePoller) poll(now time.Time) {
	ring := o.ring
	var found []hotloop.Finding
	var lost uint64
	if o.hook == nil {
		o.last, lost = ring.Visit(o.last, func(e *trace.Record) { found = o.feed(e, found) })
	} else {
		var evs []trace.Record
		evs, lost = ring.Since(o.last, o.buf[:0])
		o.buf = evs
		if len(evs) > 0 {
			o.last = evs[len(evs)-1].Seq
		} else {
			o.last += lost
		}
		for i := range evs {
			found = o.feed(&evs[i], found)
		}
		if len(evs) > 0 || lost > 0 {
			out := evs
			if lost > 0 {
				out = append([]trace.Record{{Type: trace.Lost, Time: now, Attempt: uint32(min(lost, 1<<32-1)), Seq: o.last - uint64(len(evs))}}, evs...)
			}
			o.callHook(out)
		}
	}
	if lost > 0 {
		o.loops.missed.Add(lost)
	}
	found = append(found, o.det.Tick(now)...)
	st := o.det.Stats()
	o.loops.dropped.Store(st.Dropped)
	o.loops.incomplete.Store(st.Incomplete)
	if len(found) > 0 {
		o.flag(found)
	}
}

// feed gives the hot-loop detector what it needs of e: a reconcile's cause
// and, for a commit, a copy with the cause of its controller's newest
// reconcile. It tells the detector of the records missed since the last
// record fed, where they were: just before e.
func (o *tracePoller) feed(e *trace.Record, found []hotloop.Finding) []hotloop.Finding {
	if e.Seq > o.fed+1 {
		o.det.Missed(e.Seq - o.fed - 1)
	}
	o.fed = e.Seq
	switch e.Type {
	case trace.ReconcileStart:
		o.causes[e.Controller] = e.Cause
	case trace.Commit:
		c := *e
		if c.Cause.IsZero() {
			c.Cause = o.causes[e.Controller]
		}
		found = append(found, o.det.Observe(&c)...)
	}
	return found
}

// callHook calls the user's hook; a panic is logged and turns it off.
func (o *tracePoller) callHook(evs []trace.Record) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			o.logger.Error("trace hook panicked; it is not called again", zap.String("panic", usercode.Sprint(p.Value)), zap.String("stack", string(p.Stack)))
			o.hook = nil
		}
	}()
	o.hook(evs)
}

// flag reports the loops found (flagged or ended) in the log and the trace,
// and sets the active loops and the controllers' flags.
func (o *tracePoller) flag(found []hotloop.Finding) {
	for i := range found {
		f := &found[i]
		desc := f.String()
		ev := trace.Record{Type: trace.HotLoop, Detail: desc}
		if f.Ended {
			ev.Outcome = trace.OutcomeOK
			o.logger.Info("hot loop ended", zap.String("cycle", desc), zap.Strings("controllers", f.Controllers()))
		} else {
			o.logger.Warn("hot loop: controllers keep re-triggering each other (or themselves) through their writes",
				zap.String("cycle", desc), zap.Strings("controllers", f.Controllers()),
				zap.Strings("resources", loopResources(f)), zap.Float64("ratePerSecond", f.Rate))
		}
		for _, c := range f.Controllers() {
			ev.Controller = c
			ev.Time = time.Now()
			o.ring.Add(&ev)
		}
	}
	active := o.det.Active()
	loops := make([]observe.HotLoop, 0, len(active))
	byController := map[string]string{}
	for i := range active {
		f := &active[i]
		desc := f.String()
		loops = append(loops, observe.HotLoop{Cycle: desc, Controllers: f.Controllers(), Rate: f.Rate, Since: f.Since})
		for _, c := range f.Controllers() {
			if _, ok := byController[c]; !ok {
				byController[c] = desc
			}
		}
	}
	slices.SortFunc(loops, func(a, b observe.HotLoop) int { return cmp.Compare(a.Cycle, b.Cycle) })
	o.loops.set(loops)
	for _, s := range o.sinks() {
		s.SetHotLoop(byController[s.Name()])
	}
}

// loopResources names the resources of a loop's hops.
func loopResources(f *hotloop.Finding) []string {
	var out []string
	for _, s := range f.Cycle {
		for _, ref := range s.Resources {
			out = append(out, ref.String())
		}
	}
	return out
}

// sinks returns the telemetry sinks of the registered controllers.
func (r *Runtime) sinks() []*telemetry.Controller {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*telemetry.Controller, 0, len(r.runners))
	for _, rn := range r.runners {
		if s := rn.sink(); s != nil {
			out = append(out, s)
		}
	}
	return out
}
