package testhook

import (
	"context"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Scheduler takes, for a simulator, the decisions a Runtime otherwise
// leaves to its goroutines: which change reaches which QController queue
// when, when a Controller starts and runs a pass, when a QController item
// runs, and when a cached kind's cache takes a change in. It is attached to
// a Runtime with Hooks.Schedule before anything is registered; a Runtime
// without one (every Runtime but a simulator's) checks a nil field at each
// of these points and does nothing else.
//
// The Runtime calls Deliver and Cache from its kind watches, and Gate from
// its controller goroutines; the scheduler's methods are safe for
// concurrent use. Gate blocks; Deliver and Cache never do: what they hand
// over runs when the scheduler calls its Release or Apply, once, from any
// goroutine, while the Runtime runs (never after Run returned).
type Scheduler interface {
	// Deliver hands over one change routed to one subscription: Release
	// does what the router would have done with it (wake the Controller,
	// or queue the item for the QController, raising its read floor
	// first).
	Deliver(d Delivery)
	// Gate blocks the Runtime goroutine at g until the scheduler releases
	// it (true) or ctx is done (false: the Runtime, or the Run of the
	// Controller, stops).
	Gate(ctx context.Context, g Gate) bool
	// Cache hands over, for a cached kind, the application of one change
	// to the kind's cache: Apply applies it. The changes of one kind must
	// be applied in the order they are handed over.
	Cache(c CacheChange)
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
	default:
		return "gate?"
	}
}

// Gate is where a Runtime goroutine waits for the scheduler.
type Gate struct {
	Kind       GateKind
	Controller string
	// Item and Map are the QController item (GateItem only).
	Item resource.PointerKey
	Map  bool
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
