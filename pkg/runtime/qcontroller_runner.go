package runtime

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/usercode"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/state"
)

// qcontrollerRunner runs one QController: a queue of items fed by the
// router and Concurrency workers (rules Q1–Q5).
type qcontrollerRunner struct {
	rt     *Runtime
	ctrl   controller.QController
	sub    *subscriber
	m      *controllerMetrics
	logger *zap.Logger
	// elog logs the engine's own messages about the controller, without
	// automatic stack traces (see engineLogger).
	elog     *zap.Logger
	adapter  *rwAdapter
	settings controller.QSettings
	// primary are the kinds of the InputQPrimary inputs.
	primary     map[dependency.Key]struct{}
	name        string
	concurrency uint

	badMu sync.Mutex
	// badKinds are the undeclared kinds MapInput returned, logged once each;
	// protected by badMu.
	badKinds map[dependency.Key]struct{}
}

func newQControllerRunner(rt *Runtime, ctrl controller.QController, name string, settings controller.QSettings, concurrency uint) *qcontrollerRunner {
	m := newControllerMetrics()
	q := queue.NewWithPartner(queue.Options{BackoffInitial: rt.opts.QueueBackoffInitial, BackoffMax: rt.opts.QueueBackoffMax},
		reconcileMapPartner(settings.Inputs))
	c := &qcontrollerRunner{
		rt:          rt,
		ctrl:        ctrl,
		name:        name,
		settings:    settings,
		concurrency: concurrency,
		m:           m,
		sub:         &subscriber{name: name, queue: q, m: m},
		logger:      rt.logger.With(zap.String("controller", name)),
		elog:        engineLogger(rt.logger.With(zap.String("controller", name))),
		adapter:     newRWAdapter(rt, name, newAccessSet(settings.Inputs, nil, settings.Outputs), m, nil),
		primary:     map[dependency.Key]struct{}{},
		badKinds:    map[dependency.Key]struct{}{},
	}
	for _, in := range settings.Inputs {
		if in.Kind == controller.InputQPrimary {
			c.primary[dependency.Key{Namespace: in.Namespace, Type: in.Type}] = struct{}{}
		}
	}
	return c
}

func (c *qcontrollerRunner) status() ControllerStatus {
	st := ControllerStatus{Name: c.name, Kind: KindQController}
	c.m.fill(&st)
	st.QueueLen = c.sub.queue.Len()
	st.InFlight = c.sub.queue.InFlight()
	return st
}

// reconcileMapPartner returns the queue partner relation that keeps
// Reconcile(p) and MapInput(p) of one pointer from running at once (rule Q2
// as the package doc extends it): the reconcile item and the map item of p
// are partners, for the kinds declared both as a primary input and as a
// mapped one. It is nil (no cost) when no kind is both.
func reconcileMapPartner(inputs []controller.Input) queue.Partner[qkey] {
	primary, mapped := map[dependency.Key]bool{}, map[dependency.Key]bool{}
	for _, in := range inputs {
		k := dependency.Key{Namespace: in.Namespace, Type: in.Type}
		if in.Kind == controller.InputQPrimary {
			primary[k] = true
		} else {
			mapped[k] = true
		}
	}
	both := map[dependency.Key]struct{}{}
	for k := range primary {
		if mapped[k] {
			both[k] = struct{}{}
		}
	}
	if len(both) == 0 {
		return nil
	}
	return func(k qkey) (qkey, bool) {
		if _, ok := both[dependency.Key{Namespace: k.ns, Type: k.typ}]; !ok {
			return qkey{}, false
		}
		k.mapped = !k.mapped
		return k, true
	}
}

// run runs the workers until ctx is done. Input kinds whose watch was
// already running are listed into the queue (their bootstrap did not see
// this controller); the others are filled by their watch's bootstrap.
func (c *qcontrollerRunner) run(ctx context.Context, existing []dependency.Key) {
	defer c.m.setState(StateStopped, time.Time{})

	var wg sync.WaitGroup
	for range c.concurrency {
		wg.Go(func() { c.worker(ctx) })
	}
	filled := make(map[dependency.Key]struct{}, len(existing))
	for _, k := range existing {
		if _, dup := filled[k]; !dup {
			filled[k] = struct{}{}
			c.fill(ctx, k)
		}
	}
	// Running once its queue holds what exists (Runtime.Activity reports
	// a starting QController busy).
	c.m.setState(StateRunning, time.Time{})
	c.rt.idleNotify.ping()
	wg.Wait()
	c.sub.queue.ShutDown()
}

// fill queues the existing resources of kind k exactly as the kind's
// bootstrap would have routed them to this controller: for a primary input,
// every resource (of its ID, if it has one; rule Q1); for a mapped input, a
// map item per resource, and for a mapped destroy-ready input, per own
// output that is tearing down with no finalizers (rule Q4). A List that
// fails is retried with the item backoff until it succeeds or ctx is done.
func (c *qcontrollerRunner) fill(ctx context.Context, k dependency.Key) {
	bo := newBackoff(c.rt.opts.QueueBackoffInitial, c.rt.opts.QueueBackoffMax)
	for {
		// The fill's failures are tracked as an item with no ID.
		fillKey := qkey{ns: k.Namespace, typ: k.Type}
		keys, f := c.fillKeys(ctx, k)
		if f == nil {
			c.sub.queue.AddBatch(keys)
			c.m.itemSucceeded(fillKey)
			return
		}
		if ctx.Err() != nil {
			return
		}
		delay := bo.NextBackOff()
		c.m.itemFailed(fillKey, f.text("initial list of "+k.Type+"("+k.Namespace+")"))
		if f.panic != nil {
			c.elog.Error("initial list of an input panicked; retrying after backoff", zap.String("kind", k.Type+"("+k.Namespace+")"),
				zap.String("panic", f.msg), zap.Duration("backoff", delay), stackField(f.panic))
		} else {
			c.elog.Warn("initial list of an input failed; retrying after backoff", zap.String("kind", k.Type+"("+k.Namespace+")"),
				zap.String("error", f.msg), zap.Duration("backoff", delay))
		}
		if !sleepCtx(ctx, delay) {
			return
		}
	}
}

// fillKeys lists kind k and returns the items fill queues, or why it
// failed (without naming the kind). The state (which may be foreign) and the listed resources' methods
// are user code: a panic is a failure like an error.
func (c *qcontrollerRunner) fillKeys(ctx context.Context, k dependency.Key) (keys []qkey, f *failure) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			keys, f = nil, panicFailure(p)
		}
	}()
	list, err := c.rt.st.List(ctx, resource.NewKind(k.Namespace, k.Type))
	if err != nil {
		return nil, errorFailure("List", err)
	}
	metas := make([]*resource.Metadata, len(list.Items))
	for i, r := range list.Items {
		if usercode.IsNil(r) || r.Metadata() == nil {
			return nil, &failure{msg: "the state listed a nil resource or one without metadata"}
		}
		md := r.Metadata()
		if md.Namespace() != k.Namespace || md.Type() != k.Type || md.ID() == "" {
			return nil, &failure{msg: "the state listed " + resource.PointerString(md)}
		}
		metas[i] = md
	}
	for _, in := range c.settings.Inputs {
		if in.Namespace != k.Namespace || in.Type != k.Type {
			continue
		}
		id, hasID := in.ID.Get()
		sub := dependency.Subscription[*subscriber]{Handle: c.sub, Name: c.name, ID: id, HasID: hasID, Kind: in.Kind}
		for _, md := range metas {
			if !matches(&sub, state.Created, md) {
				continue
			}
			keys = append(keys, qkey{ns: md.Namespace(), typ: md.Type(), id: md.ID(), mapped: in.Kind != controller.InputQPrimary})
		}
	}
	return keys, nil
}

// worker processes items until ctx is done. The queue never hands out an
// item that is in flight (rule Q2).
func (c *qcontrollerRunner) worker(ctx context.Context) {
	for {
		k, ok := c.sub.queue.Get(ctx)
		if !ok {
			return
		}
		o := c.process(ctx, k)
		delay := c.sub.queue.Done(k, o.result)
		c.report(k, o, delay)
		c.rt.idleNotify.ping()
	}
}

// process runs one item and returns its outcome (rule Q3, see
// classifyItemError). A failure while the engine stops (ctx done) is the
// cancel's doing and counts as success, unless it is a panic.
func (c *qcontrollerRunner) process(ctx context.Context, k qkey) itemOutcome {
	var start time.Duration
	if c.rt.metrics {
		start = c.rt.now()
	}
	o := c.call(ctx, k)
	if c.rt.metrics {
		c.m.busy.Add(int64(c.rt.now() - start))
		c.m.reconciles.Add(1)
	}
	if o.fail != nil && o.fail.panic == nil && ctx.Err() != nil {
		// The engine is stopping: the queue is about to shut down.
		return itemOutcome{result: queue.Success()}
	}
	return o
}

// call runs the item's user code — Reconcile, or MapInput and the pointers
// it returned — and classifies its error, all inside one recovery: a panic
// fails that item only (rule Q5), and what comes out is plain data.
func (c *qcontrollerRunner) call(ctx context.Context, k qkey) (o itemOutcome) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			o = itemOutcome{result: queue.Failure(), fail: panicFailure(p)}
		}
	}()
	var err error
	if k.mapped {
		err = c.mapItem(ctx, k)
	} else {
		err = c.ctrl.Reconcile(ctx, c.logger, c.adapter, k.pointer())
	}
	return classifyItemError(err)
}

// report counts and logs the outcome of item k, which the queue made due
// again after delay. A failure is retried: it logs at WARN, without a
// stack, with the delay; a panic is a bug: ERROR, with the stack of the
// panicking goroutine.
func (c *qcontrollerRunner) report(k qkey, o itemOutcome, delay time.Duration) {
	if o.requeue || o.fail != nil {
		if c.rt.metrics {
			c.m.requeues.Add(1)
		}
	}
	f := o.fail
	if f == nil {
		c.m.itemSucceeded(k)
		return
	}
	c.m.itemFailed(k, f.text(k.what()))
	switch {
	case f.panic != nil:
		if c.rt.metrics {
			c.m.crashes.Add(1)
		}
		c.elog.Error(k.op()+" panicked; retrying after backoff", zap.Stringer("item", k),
			zap.String("panic", f.msg), zap.Duration("backoff", delay), stackField(f.panic))
	case o.logged:
		// A MapInput returning pointers of undeclared kinds is logged once
		// per kind (see logBadKind).
	case o.requeue:
		c.elog.Warn(k.failedMsg()+"; requeued after the interval", zap.Stringer("item", k),
			zap.String("error", f.msg), zap.Duration("interval", delay))
	default:
		c.elog.Warn(k.failedMsg()+"; retrying after backoff", zap.Stringer("item", k),
			zap.String("error", f.msg), zap.Duration("backoff", delay))
	}
}

// mapItem calls MapInput and queues the primary pointers it returns (rule
// Q4). Pointers of a kind that is not a primary input are an error of the
// item, logged once per kind with the offending pointer; the valid ones are
// queued anyway. The pointers' methods are user code: mapItem runs inside
// the recovery of call.
func (c *qcontrollerRunner) mapItem(ctx context.Context, k qkey) error {
	ptrs, err := c.ctrl.MapInput(ctx, c.logger, c.adapter, k.pointer())
	if err != nil {
		return err
	}
	keys := make([]qkey, 0, len(ptrs))
	var bad []string
	for _, p := range ptrs {
		if usercode.IsNil(p) {
			bad = append(bad, nilPointer)
			c.logBadKind(k, dependency.Key{}, nilPointer) // the zero Key stands for nil
			continue
		}
		key := dependency.KeyOf(p)
		if _, ok := c.primary[key]; !ok || p.ID() == "" {
			bad = append(bad, resource.PointerString(p))
			c.logBadKind(k, key, resource.PointerString(p))
			continue
		}
		keys = append(keys, qkey{ns: p.Namespace(), typ: p.Type(), id: p.ID()})
	}
	switch len(keys) {
	case 0:
	case 1:
		c.sub.queue.Add(keys[0])
	default:
		c.sub.queue.AddBatch(keys)
	}
	if len(bad) > 0 {
		return &badKindError{ptrs: bad}
	}
	return nil
}

// nilPointer is how a nil pointer returned by MapInput is reported.
const nilPointer = "<nil>"

// logBadKind logs, once per kind (and once for nil pointers, whose key is
// the zero Key), that MapInput returned the pointer p of a kind that is not
// a primary input.
func (c *qcontrollerRunner) logBadKind(k qkey, key dependency.Key, p string) {
	c.badMu.Lock()
	_, seen := c.badKinds[key]
	c.badKinds[key] = struct{}{}
	c.badMu.Unlock()
	if !seen {
		c.elog.Error("MapInput returned a pointer that is not of a primary input kind",
			zap.Stringer("item", k), zap.String("pointer", p))
	}
}

// badKindError is the error of a MapInput call that returned pointers that
// are not of a primary input kind (or have no ID).
type badKindError struct {
	ptrs []string
}

// text describes the error; the item is named by whoever reports it.
func (e *badKindError) text() string {
	return "returned pointers that are not of a primary input kind: " + strings.Join(e.ptrs, ", ")
}

func (e *badKindError) Error() string { return "MapInput " + e.text() }
