package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// The daemon of the chain tests: apply reads LinkSpecs and writes
// LinkStatuses, cleanup and resolver read LinkStatuses, routes reads
// AddressSpecs (a Controller whose pass coalesces them), pairs is a
// QController of AddressSpecs.
var (
	linkSpec = trace.Ref{Namespace: "config", Type: "LinkSpecs", ID: "eth1", Version: 4}
	status   = func(v uint64) trace.Ref {
		return trace.Ref{Namespace: "network", Type: "LinkStatuses", ID: "eth1", Version: v}
	}
	address = func(id string, v uint64) trace.Ref {
		return trace.Ref{Namespace: "network", Type: "AddressSpecs", ID: id, Version: v}
	}
	route    = trace.Ref{Namespace: "network", Type: "RouteSpecs", ID: "default", Version: 2}
	resolver = trace.Ref{Namespace: "network", Type: "Resolvers", ID: "dns", Version: 3}
	remove   = Change{Remove: []resource.Pointer{resource.NewPointer("config", "LinkSpecs", "eth1")}}
)

func chainReaders() readers {
	kind := func(ns, typ string) resource.KindKey { return resource.KindOf(resource.NewKind(ns, typ)) }
	return readers{
		inputs: map[string][]resource.KindKey{
			"apply":    {kind("config", "LinkSpecs")},
			"cleanup":  {kind("network", "LinkStatuses")},
			"resolver": {kind("network", "LinkStatuses")},
			"address":  {kind("network", "LinkStatuses")},
			"routes":   {kind("network", "AddressSpecs")},
			"pairs":    {kind("network", "AddressSpecs")},
		},
		queued: map[string]bool{"pairs": true},
	}
}

// explainTrace explains the changes of pointers after the trace recs of
// the proposed removal of linkSpec.
func explainTrace(recs []trace.Record, pointers ...trace.Ref) []ResourceChange {
	ring := trace.NewRing(64)
	phases := []phase{{from: ring.Last(), proposed: refKey(linkSpec)}}
	for _, e := range recs {
		ring.Add(&e)
	}
	changes := make([]ResourceChange, len(pointers))
	for i, p := range pointers {
		changes[i] = ResourceChange{Op: Update, Pointer: refKey(p)}
	}
	explain(changes, ring, phases, chainReaders(), remove, nil)
	return changes
}

// TestPL5_WritersAndChainFollowVersionsNotTheTracesOrder: the trace
// receives a commit once its write returned, so the write it caused can
// come first (a controller descheduled between its write and its trace
// record). The plan still names the writers in the order they wrote and
// starts the chain at the resource's first write.
func TestPL5_WritersAndChainFollowVersionsNotTheTracesOrder(t *testing.T) {
	changes := explainTrace([]trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: linkSpec},
		// cleanup, woken by apply's teardown (version 8), is traced first.
		{Type: trace.ReconcileStart, Controller: "cleanup", Cause: status(8)},
		{Type: trace.Commit, Controller: "cleanup", Op: "removeFinalizer", Resource: status(9)},
		{Type: trace.Commit, Controller: "apply", Op: "teardown", Resource: status(8)},
		{Type: trace.ReconcileStart, Controller: "apply", Cause: status(9)},
		{Type: trace.Commit, Controller: "apply", Op: "destroy", Resource: status(9)},
	}, status(0))
	assert.Equal(t, []string{"apply", "cleanup"}, changes[0].Writers, "in the order they wrote")
	assert.Equal(t, []string{
		"LinkSpecs(config/eth1) (the change)",
		"apply teardown LinkStatuses(network/eth1)",
	}, changes[0].Chain)
}

// TestPL5_AChainDoesNotDependOnWhatAPassCoalesced: a Controller's pass
// may coalesce several changes, and the trace names the newest as its
// cause, so two runs of one plan trace different causes for the same
// write. The chain is the shortest through the kinds each writer reads,
// ties going to the first cause in kind and ID order: the same in both.
func TestPL5_AChainDoesNotDependOnWhatAPassCoalesced(t *testing.T) {
	teardown := []trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: linkSpec},
		{Type: trace.Commit, Controller: "apply", Op: "teardown", Resource: status(8)},
		{Type: trace.ReconcileStart, Controller: "address", Cause: status(8)},
		{Type: trace.Commit, Controller: "address", Op: "teardown", Resource: address("fd00", 5)},
		{Type: trace.Commit, Controller: "address", Op: "teardown", Resource: address("10.0", 5)},
	}
	runs := map[string][]trace.Record{
		"each change its own pass": append(append([]trace.Record(nil), teardown...),
			trace.Record{Type: trace.ReconcileStart, Controller: "routes", Cause: address("10.0", 5)},
			trace.Record{Type: trace.Commit, Controller: "routes", Op: "teardown", Resource: route},
			trace.Record{Type: trace.ReconcileStart, Controller: "resolver", Cause: status(8)},
			trace.Record{Type: trace.Commit, Controller: "resolver", Op: "modify", Resource: resolver},
		),
		"coalesced passes naming the newest": append(append([]trace.Record(nil), teardown...),
			trace.Record{Type: trace.ReconcileStart, Controller: "routes", Cause: address("fd00", 5), Causes: 2},
			trace.Record{Type: trace.Commit, Controller: "routes", Op: "teardown", Resource: route},
			trace.Record{Type: trace.Commit, Controller: "apply", Op: "removeFinalizer", Resource: status(9)},
			trace.Record{Type: trace.ReconcileStart, Controller: "resolver", Cause: status(9), Causes: 2},
			trace.Record{Type: trace.Commit, Controller: "resolver", Op: "modify", Resource: resolver},
		),
	}
	for name, recs := range runs {
		changes := explainTrace(recs, route, resolver)
		assert.Equal(t, []string{
			"LinkSpecs(config/eth1) (the change)",
			"apply teardown LinkStatuses(network/eth1)",
			"address teardown AddressSpecs(network/10.0)",
			"routes teardown RouteSpecs(network/default)",
		}, changes[0].Chain, name)
		assert.Equal(t, []string{
			"LinkSpecs(config/eth1) (the change)",
			"apply teardown LinkStatuses(network/eth1)",
			"resolver modify Resolvers(network/dns)",
		}, changes[1].Chain, name)
	}
}

// TestPL5_AQControllersWriteFollowsItsReconcilesItem: a QController's
// reconcile is of one item, which the trace names exactly: its write's
// chain goes through that item, not the first in ID order.
func TestPL5_AQControllersWriteFollowsItsReconcilesItem(t *testing.T) {
	echo := trace.Ref{Namespace: "network", Type: "Echoes", ID: "fd00", Version: 1}
	changes := explainTrace([]trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: linkSpec},
		{Type: trace.Commit, Controller: "apply", Op: "teardown", Resource: status(8)},
		{Type: trace.ReconcileStart, Controller: "address", Cause: status(8)},
		{Type: trace.Commit, Controller: "address", Op: "teardown", Resource: address("fd00", 5)},
		{Type: trace.Commit, Controller: "address", Op: "teardown", Resource: address("10.0", 5)},
		{Type: trace.ReconcileStart, Controller: "pairs", Op: "reconcile", Resource: address("fd00", 0), Cause: address("fd00", 5)},
		{Type: trace.Commit, Controller: "pairs", Op: "create", Resource: echo},
	}, echo)
	assert.Equal(t, []string{
		"LinkSpecs(config/eth1) (the change)",
		"apply teardown LinkStatuses(network/eth1)",
		"address teardown AddressSpecs(network/fd00)",
		"pairs create Echoes(network/fd00)",
	}, changes[0].Chain)
}

// TestPL5_AWriteTracedAfterTheDestroyStaysInItsLife: the writer of a
// teardown can trace it after the finalizer edit and the destroy it led
// to (descheduled between its write and its trace record): the teardown
// is still the resource's first write, in the life the destroy ended.
func TestPL5_AWriteTracedAfterTheDestroyStaysInItsLife(t *testing.T) {
	changes := explainTrace([]trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: linkSpec},
		{Type: trace.ReconcileStart, Controller: "cleanup", Cause: status(8)},
		{Type: trace.Commit, Controller: "cleanup", Op: "removeFinalizer", Resource: status(9)},
		{Type: trace.ReconcileStart, Controller: "apply", Cause: status(9)},
		{Type: trace.Commit, Controller: "apply", Op: "destroy", Resource: status(9)},
		{Type: trace.Commit, Controller: "apply", Op: "teardown", Resource: status(8)},
	}, status(0))
	assert.Equal(t, []string{"apply", "cleanup"}, changes[0].Writers, "in the order they wrote")
	assert.Equal(t, []string{
		"LinkSpecs(config/eth1) (the change)",
		"apply teardown LinkStatuses(network/eth1)",
	}, changes[0].Chain)
}

// TestPL5_AWriteOutsideAReconcileIsCausedByWhatItsControllerReads: a
// QController's RunHook writes while none of its reconciles is open in the
// trace (after the ReconcileEnd of its last one): the write is not that
// reconcile's, and its cause is a change of the phase of a kind the
// QController reads, as for a Controller's, the first in kind and ID order.
func TestPL5_AWriteOutsideAReconcileIsCausedByWhatItsControllerReads(t *testing.T) {
	echo := trace.Ref{Namespace: "network", Type: "Echoes", ID: "hooked", Version: 1}
	changes := explainTrace([]trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: linkSpec},
		{Type: trace.Commit, Controller: "apply", Op: "teardown", Resource: status(8)},
		{Type: trace.ReconcileStart, Controller: "address", Cause: status(8)},
		{Type: trace.Commit, Controller: "address", Op: "teardown", Resource: address("fd00", 5)},
		{Type: trace.Commit, Controller: "address", Op: "teardown", Resource: address("10.0", 5)},
		{Type: trace.ReconcileStart, Controller: "pairs", Op: "reconcile", Resource: address("fd00", 0), Cause: address("fd00", 5)},
		{Type: trace.ReconcileEnd, Controller: "pairs", Op: "reconcile", Resource: address("fd00", 0)},
		{Type: trace.Commit, Controller: "pairs", Op: "modify", Resource: echo},
	}, echo)
	assert.Equal(t, []string{
		"LinkSpecs(config/eth1) (the change)",
		"apply teardown LinkStatuses(network/eth1)",
		"address teardown AddressSpecs(network/10.0)",
		"pairs modify Echoes(network/hooked)",
	}, changes[0].Chain)
}
