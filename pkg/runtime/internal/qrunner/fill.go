package qrunner

import (
	"context"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/retry"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/route"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

// fill queues the existing resources of kind k exactly as the kind's
// bootstrap would have routed them to this controller: for a primary input,
// every resource (of its ID, if it has one; rule Q1); for a mapped input, a
// map item per resource, and for a mapped destroy-ready input, per own
// output that is tearing down with no finalizers (rule Q4). A List that
// fails is retried with the item backoff until it succeeds or ctx is done;
// while it fails, it counts as a failing item.
func (c *Runner) fill(ctx context.Context, k resource.KindKey) {
	bo := c.cfg.Retry.Backoff.Sequence()
	for {
		items, o := c.fillItems(ctx, k)
		if o.Class == outcome.OK {
			c.queue.AddBatch(items)
			c.fillFailing.Store(false)
			c.status.Recover(c.stillFailing)
			return
		}
		if ctx.Err() != nil {
			return
		}
		delay := bo.Next()
		d := outcome.Decide(outcome.InitialList, o)
		c.fillFailing.Store(true)
		c.status.Failed(o.Text("initial list of " + k.String()))
		outcome.Log(c.elog, outcome.InitialList, o, d, delay, zap.Stringer("kind", k))
		if !retry.Wait(ctx, delay) {
			return
		}
	}
}

// fillItems lists kind k and returns the items fill queues, or the outcome
// of the failed list (whose message does not name the kind). The state
// (which may be foreign) and the listed resources' methods are user code: a
// panic is a failure like an error.
func (c *Runner) fillItems(ctx context.Context, k resource.KindKey) (items []work.Item, o outcome.Outcome) {
	defer func() {
		if p := usercode.Recovered(recover()); p != nil {
			items, o = nil, outcome.OfPanic(p)
		}
	}()
	list, err := c.cfg.State.List(ctx, k)
	if err != nil {
		return nil, outcome.OfError("List", err)
	}
	metas := make([]*resource.Metadata, len(list.Items))
	for i, r := range list.Items {
		if usercode.IsNil(r) || r.Metadata() == nil {
			return nil, outcome.Failure("the state listed a nil resource or one without metadata")
		}
		md := r.Metadata()
		if resource.KindOf(md) != k || md.ID() == "" {
			return nil, outcome.Failure("the state listed " + resource.PointerString(md))
		}
		metas[i] = md
	}
	for _, in := range c.cfg.Settings.Inputs {
		if resource.KindOf(resource.NewKind(in.Namespace, in.Type)) != k {
			continue
		}
		id, hasID := in.ID.Get()
		sub := route.Subscription{Handle: c.sub, Name: c.cfg.Name, ID: id, HasID: hasID, Kind: in.Kind}
		for _, md := range metas {
			if route.Matches(&sub, state.Created, md) {
				items = append(items, work.Item{Ptr: resource.PointerOf(md), Map: in.Kind != controller.InputQPrimary})
			}
		}
	}
	return items, outcome.Success()
}
