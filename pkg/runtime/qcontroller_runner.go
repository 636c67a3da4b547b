package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/dependency"
	"github.com/resgraph/resgraph/pkg/runtime/internal/queue"
	"github.com/resgraph/resgraph/pkg/state"
)

// qcontrollerRunner runs one QController: a queue of items fed by the
// router and Concurrency workers (rules Q1–Q5).
type qcontrollerRunner struct {
	rt       *Runtime
	ctrl     controller.QController
	sub      *subscriber
	m        *controllerMetrics
	logger   *zap.Logger
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
	q := queue.New[qkey](queue.Options{BackoffInitial: rt.opts.QueueBackoffInitial, BackoffMax: rt.opts.QueueBackoffMax})
	c := &qcontrollerRunner{
		rt:          rt,
		ctrl:        ctrl,
		name:        name,
		settings:    settings,
		concurrency: concurrency,
		m:           m,
		sub:         &subscriber{name: name, queue: q, m: m},
		logger:      rt.logger.With(zap.String("controller", name)),
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

// run runs the workers until ctx is done. Input kinds whose watch was
// already running are listed into the queue (their bootstrap did not see
// this controller); the others are filled by their watch's bootstrap.
func (c *qcontrollerRunner) run(ctx context.Context, existing []dependency.Key) {
	c.m.setState(StateRunning, time.Time{})
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
	wg.Wait()
	c.sub.queue.ShutDown()
}

// fill queues the existing resources of kind k exactly as the kind's
// bootstrap would have routed them to this controller: for a primary input,
// every resource (of its ID, if it has one; rule Q1); for a mapped input, a
// map item per resource, and for a mapped destroy-ready input, per own
// output that is tearing down with no finalizers (rule Q4).
func (c *qcontrollerRunner) fill(ctx context.Context, k dependency.Key) {
	list, err := c.rt.st.List(ctx, resource.NewKind(k.Namespace, k.Type))
	if err != nil {
		if ctx.Err() == nil {
			c.logger.Error("initial list of an input failed", zap.String("kind", k.Type+"("+k.Namespace+")"), zap.Error(err))
			c.m.setError(err)
		}
		return
	}
	var keys []qkey
	for _, in := range c.settings.Inputs {
		if in.Namespace != k.Namespace || in.Type != k.Type {
			continue
		}
		id, hasID := in.ID.Get()
		sub := dependency.Subscription[*subscriber]{Handle: c.sub, Name: c.name, ID: id, HasID: hasID, Kind: in.Kind}
		for _, r := range list.Items {
			ev := state.Event{Type: state.Created, Resource: r}
			if !matches(&sub, &ev) {
				continue
			}
			md := r.Metadata()
			keys = append(keys, qkey{ns: md.Namespace(), typ: md.Type(), id: md.ID(), mapped: in.Kind != controller.InputQPrimary})
		}
	}
	c.sub.queue.AddBatch(keys)
}

// worker processes items until ctx is done. The queue never hands out an
// item that is in flight (rule Q2).
func (c *qcontrollerRunner) worker(ctx context.Context) {
	for {
		k, ok := c.sub.queue.Get(ctx)
		if !ok {
			return
		}
		c.sub.queue.Done(k, c.process(ctx, k))
		c.rt.idleNotify.ping()
	}
}

// process runs one item and maps its outcome to a queue result (rule Q3):
// success resets the item's backoff; a RequeueError with a non-negative
// interval requeues it after the interval (a failure only if it wraps an
// error); any other error, a negative interval or a panic is a failure,
// retried with the item's exponential backoff.
func (c *qcontrollerRunner) process(ctx context.Context, k qkey) queue.Result {
	var start time.Duration
	if c.rt.metrics {
		start = c.rt.now()
	}
	var err error
	if k.mapped {
		err = c.mapItem(ctx, k)
	} else {
		err = c.reconcile(ctx, k)
	}
	if c.rt.metrics {
		c.m.busy.Add(int64(c.rt.now() - start))
		c.m.reconciles.Add(1)
	}
	if err == nil {
		return queue.Success()
	}
	if ctx.Err() != nil {
		// The engine is stopping: the queue is about to shut down.
		return queue.Success()
	}

	var rq *controller.RequeueError
	if errors.As(err, &rq) {
		if c.rt.metrics {
			c.m.requeues.Add(1)
		}
		if rq.Interval() < 0 {
			err = fmt.Errorf("%s: negative requeue interval %v: %w", k, rq.Interval(), err)
			c.m.setError(err)
			c.logger.Error("reconcile failed", zap.Stringer("item", k), zap.Error(err))
			return queue.Failure()
		}
		if rq.Err() != nil {
			// A failure like any other (same level), retried after the
			// interval instead of the backoff.
			c.m.setError(err)
			c.logger.Error("reconcile failed; requeued after the interval", zap.Stringer("item", k), zap.Duration("interval", rq.Interval()), zap.Error(err))
		}
		return queue.RequeueAfter(rq.Interval())
	}

	if c.rt.metrics {
		c.m.requeues.Add(1)
	}
	c.m.setError(err)
	var bad *badKindError
	if !errors.As(err, &bad) { // logged once per kind by mapItem
		c.logger.Error("reconcile failed; retrying with backoff", zap.Stringer("item", k), zap.Error(err))
	}
	return queue.Failure()
}

// reconcile calls Reconcile, turning a panic into an error of the item
// logged with its stack (rule Q5).
func (c *qcontrollerRunner) reconcile(ctx context.Context, k qkey) (err error) {
	defer c.recoverItem(k, "Reconcile", &err)
	return c.ctrl.Reconcile(ctx, c.logger, c.adapter, k.pointer())
}

// mapItem calls MapInput and queues the primary pointers it returns (rule
// Q4). Pointers of a kind that is not a primary input are an error of the
// item, logged once per kind with the offending pointer; the valid ones are
// queued anyway.
func (c *qcontrollerRunner) mapItem(ctx context.Context, k qkey) error {
	ptrs, err := c.mapInput(ctx, k)
	if err != nil {
		return err
	}
	keys := make([]qkey, 0, len(ptrs))
	var bad []string
	for _, p := range ptrs {
		if p == nil || isNilValue(p) {
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
		return &badKindError{item: k, ptrs: bad}
	}
	return nil
}

// mapInput calls MapInput, turning a panic into an error of the item.
func (c *qcontrollerRunner) mapInput(ctx context.Context, k qkey) (ptrs []resource.Pointer, err error) {
	defer c.recoverItem(k, "MapInput", &err)
	return c.ctrl.MapInput(ctx, c.logger, c.adapter, k.pointer())
}

// recoverItem turns a panic of op on item k into *errp, logged with its
// stack.
func (c *qcontrollerRunner) recoverItem(k qkey, op string, errp *error) {
	p := recover()
	if p == nil {
		return
	}
	if c.rt.metrics {
		c.m.crashes.Add(1)
	}
	*errp = fmt.Errorf("%s %s panicked: %v", op, k, p)
	c.logger.Error(op+" panicked", zap.Stringer("item", k), zap.Any("panic", p), zap.Stack("stack"))
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
		c.logger.Error("MapInput returned a pointer that is not of a primary input kind",
			zap.Stringer("item", k), zap.String("pointer", p))
	}
}

// badKindError is the error of a MapInput call that returned pointers that
// are not of a primary input kind (or have no ID).
type badKindError struct {
	ptrs []string
	item qkey
}

func (e *badKindError) Error() string {
	return fmt.Sprintf("%s: MapInput returned pointers that are not of a primary input kind: %s", e.item, strings.Join(e.ptrs, ", "))
}
