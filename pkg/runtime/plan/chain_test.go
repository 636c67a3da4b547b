package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestPL5_WritersAndChainFollowVersionsNotTheTracesOrder: the trace
// receives a commit once its write returned, so the write it caused can
// come first (a controller descheduled between its write and its trace
// record). The plan still names the writers in the order they wrote and
// walks the chain through the version each reconcile was caused by.
func TestPL5_WritersAndChainFollowVersionsNotTheTracesOrder(t *testing.T) {
	spec := trace.Ref{Namespace: "config", Type: "LinkSpecs", ID: "eth1", Version: 4}
	status := func(v uint64) trace.Ref {
		return trace.Ref{Namespace: "network", Type: "LinkStatuses", ID: "eth1", Version: v}
	}
	ring := trace.NewRing(64)
	mark := ring.Last()
	for _, e := range []trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: spec},
		// cleanup, woken by apply's teardown (version 8), is traced first.
		{Type: trace.ReconcileStart, Controller: "cleanup", Cause: status(8)},
		{Type: trace.Commit, Controller: "cleanup", Op: "removeFinalizer", Resource: status(9)},
		{Type: trace.Commit, Controller: "apply", Op: "teardown", Resource: status(8)},
		{Type: trace.ReconcileStart, Controller: "apply", Cause: status(9)},
		{Type: trace.Commit, Controller: "apply", Op: "destroy", Resource: status(9)},
	} {
		ring.Add(&e)
	}
	ptr := resource.PointerOf(resource.NewPointer("network", "LinkStatuses", "eth1"))
	changes := []ResourceChange{{Op: Destroy, Pointer: ptr}}
	explain(changes, ring, mark, Change{Remove: []resource.Pointer{resource.NewPointer("config", "LinkSpecs", "eth1")}})
	assert.Equal(t, []string{"apply", "cleanup"}, changes[0].Writers, "in the order they wrote")
	assert.Equal(t, []string{
		"LinkSpecs(config/eth1) (the change)",
		"apply teardown LinkStatuses(network/eth1)",
	}, changes[0].Chain)
}

// TestPL5_AChangeCausedByADestroyLeadsToTheDestroy: a reconcile caused by
// a destroy names the version destroyed; the chain names the destroy, not
// the write of that version.
func TestPL5_AChangeCausedByADestroyLeadsToTheDestroy(t *testing.T) {
	spec := trace.Ref{Namespace: "config", Type: "LinkSpecs", ID: "eth1", Version: 4}
	status := trace.Ref{Namespace: "network", Type: "LinkStatuses", ID: "eth1", Version: 9}
	resolver := trace.Ref{Namespace: "network", Type: "Resolvers", ID: "dns", Version: 3}
	ring := trace.NewRing(64)
	mark := ring.Last()
	for _, e := range []trace.Record{
		{Type: trace.ReconcileStart, Controller: "apply", Cause: spec},
		{Type: trace.Commit, Controller: "apply", Op: "update", Resource: status},
		{Type: trace.Commit, Controller: "apply", Op: "destroy", Resource: status},
		{Type: trace.ReconcileStart, Controller: "resolver", Cause: status},
		{Type: trace.Commit, Controller: "resolver", Op: "modify", Resource: resolver},
	} {
		ring.Add(&e)
	}
	ptr := resource.PointerOf(resource.NewPointer("network", "Resolvers", "dns"))
	changes := []ResourceChange{{Op: Update, Pointer: ptr}}
	explain(changes, ring, mark, Change{Remove: []resource.Pointer{resource.NewPointer("config", "LinkSpecs", "eth1")}})
	assert.Equal(t, []string{
		"LinkSpecs(config/eth1) (the change)",
		"apply destroy LinkStatuses(network/eth1)",
		"resolver modify Resolvers(network/dns)",
	}, changes[0].Chain)
}
