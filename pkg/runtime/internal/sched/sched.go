// Package sched is the Runtime's one seam for a simulator: the
// [Scheduler] a Runtime receives at construction and hands to its router
// and its controller runners. Every decision the Runtime otherwise leaves
// to its goroutines goes through it — when a routed batch of changes is
// delivered, when a cached kind's cache takes a batch in, when a
// Controller starts or takes its pass, when a QController item runs. A
// Runtime without a simulator has [Direct], which lets each happen at
// once: the routing path checks no field, it calls its Scheduler.
package sched

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Scheduler takes the Runtime's scheduling decisions. The Runtime calls
// Route and Cache from its kind watches, and Gate from its controller
// goroutines; a Scheduler is safe for concurrent use. Gate blocks; Route
// and Cache never do: what a simulator is handed over runs when it calls
// its Release or Apply, once, from any goroutine, while the Runtime runs
// (never after Run returned).
type Scheduler interface {
	// Route is offered every batch of changes a kind watch routes to its
	// subscriptions. Direct declines it (false): the router delivers it
	// at once. A simulator takes it (true), during the call, change by
	// change: b.HandOver(events, metas, bootstrap, take).
	Route(b Batch, events []state.Event, metas []*resource.Metadata, bootstrap bool) (taken bool)
	// Cache is offered every batch of changes of a cached kind on its way
	// into the kind's cache. Direct declines it (false): the watch
	// applies it at once. A simulator takes it (true), during the call:
	// b.HandOver(take). The changes of one kind must be applied in the
	// order they are handed over.
	Cache(b CacheBatch) (taken bool)
	// Gate blocks the goroutine at g until the scheduler lets it go (true)
	// or ctx is done (false: the Runtime, or the Run of the Controller,
	// stops). Direct lets every goroutine go at once.
	Gate(ctx context.Context, g Gate) bool
}

// Picker is a Scheduler that also chooses which due item each idle worker
// of a QController takes (a simulator replaying a recording, so that the
// items run in the recorded order whatever the queue's). A Runtime whose
// Scheduler is no Picker (Direct) has its workers take the items in the
// queue's order, and pays nothing for this.
type Picker interface {
	Scheduler
	// Pick blocks an idle worker of p.Controller until the scheduler
	// picks one of the items p.Due lists (ok), or ctx is done (false:
	// the Runtime, or the controller's term, stops). The item picked
	// runs at once, without a GateItem: the pick is its gate. When it is
	// no longer due as the worker takes it, the worker picks again.
	Pick(ctx context.Context, p Pick) (item resource.PointerKey, mapItem, ok bool)
}

// Pick is an idle QController worker waiting for the scheduler to pick
// its next item.
type Pick struct {
	Controller string
	// Due calls yield with each item the worker may take now (item, and
	// whether it is a MapInput), in the queue's order, until yield
	// returns false. It takes the queue's lock: the scheduler calls it
	// while the Runtime's goroutines wait, never from yield.
	Due func(yield func(item resource.PointerKey, mapItem bool) bool)
}

// Batch is a kind watch routing a batch of its changes.
type Batch interface {
	// HandOver hands the batch over as one Delivery per change and
	// subscription, in the order the router would deliver them.
	HandOver(events []state.Event, metas []*resource.Metadata, bootstrap bool, take func(Delivery))
}

// CacheBatch is a cached kind's watch taking a batch of changes into the
// cache.
type CacheBatch interface {
	// HandOver hands the batch over as CacheChanges: in the live phase
	// one per change, Live, at its own revision; otherwise (a re-list's
	// diff, the end of a bootstrap) the batch as one, not Live.
	HandOver(take func(CacheChange))
}

// Direct is the Scheduler of a Runtime without a simulator: it declines
// every batch, which is then delivered and applied at once, and opens
// every gate. Its methods do nothing else: a Runtime without a simulator
// pays one call at each of these points.
type Direct struct{}

// Route declines b.
func (*Direct) Route(Batch, []state.Event, []*resource.Metadata, bool) bool { return false }

// Cache declines b.
func (*Direct) Cache(CacheBatch) bool { return false }

// Gate lets the goroutine go.
func (*Direct) Gate(context.Context, Gate) bool { return true }

// direct is the one Direct.
var direct = &Direct{}

// Or returns s, or Direct when s is nil.
func Or(s Scheduler) Scheduler {
	if s == nil {
		return direct
	}
	return s
}

// Delivery is one change of a watched kind routed to one subscription.
type Delivery struct {
	// Controller is the subscriber's name, Input the kind of its input.
	Controller string
	Input      controller.InputKind
	// QController is set when the subscriber is a QController (the
	// change queues an item); otherwise it wakes a Controller.
	QController bool
	// Bootstrap marks the contents of the kind's first bootstrap (they
	// fill QController queues).
	Bootstrap bool
	Type      state.EventType
	// Resource is the changed resource's metadata (a shared snapshot:
	// read only).
	Resource *resource.Metadata
	// Revision is the state's revision of the change (0 when the state
	// does not number its changes).
	Revision uint64
	// Stream identifies the subscription (a comparable value): the
	// deliveries of one stream are released in the order they were
	// handed over, as the router delivers them; streams interleave freely.
	Stream any
	// Silent marks a change that queues nothing but that the subscription
	// remembers (a mapped input's last version, rule Q4): its Release
	// records it, in its stream's order.
	Silent bool
	// Release delivers the change; the scheduler calls it at most once.
	Release func()
}

// GateKind says what a gated goroutine is about to do.
type GateKind uint8

const (
	// GateStart: a Controller's Run is about to be called (at start and
	// at every restart).
	GateStart GateKind = iota + 1
	// GatePass: a Controller is about to be offered a ReconcileEvent.
	GatePass
	// GateItem: a QController worker is about to run Item (Reconcile, or
	// MapInput when Map is set).
	GateItem
	// GateHook: a QController's RunHook (controller.QRunHook) is about to
	// be called (at start and after every failure).
	GateHook
	// GateWrite: a controller is about to write (create, update, modify,
	// tear down, destroy, or change finalizers of) Gate.Item, its target;
	// a Modify waits there after its function ran (and again after each
	// run of it that met a conflict), so that what the function reads is
	// read before the gate. A simulator that replays a recording takes
	// each commit as a step of its own, so that one pass's commits
	// interleave with another's as they did when recorded.
	GateWrite
)

// String names the gate kind.
func (k GateKind) String() string {
	switch k {
	case GateStart:
		return "start"
	case GatePass:
		return "pass"
	case GateItem:
		return "item"
	case GateHook:
		return "hook"
	case GateWrite:
		return "write"
	default:
		return "gate?"
	}
}

// Gate is where a Runtime goroutine waits for the scheduler.
type Gate struct {
	Kind       GateKind
	Controller string
	// Item and Map are the QController item (GateItem), or Item the
	// target of a write (GateWrite).
	Item resource.PointerKey
	Map  bool
	// Source is, for a GateWrite made in the run of a QController's item,
	// that item (zero for a Controller's pass): a simulator replaying a
	// recording takes the items' writes in the recorded order.
	Source resource.PointerKey
}

// CacheChange is one change of a cached kind on its way into the cache.
type CacheChange struct {
	Kind     resource.KindKey
	Revision uint64
	// Live is set for one live change applied on its own: the cache is
	// then the kind at Revision. A change that is not Live is a batch of
	// a re-list or of the end of a bootstrap: the scheduler applies every
	// held change of the kind, then it, before the watch goes on (a
	// re-list compares what it lists with what the cache holds).
	Live bool
	// Apply applies the change to the cache; the scheduler calls it
	// exactly once, in order with the kind's other changes, unless the
	// Runtime stopped.
	Apply func()
}
