package conformance

import "github.com/resgraph/resgraph/pkg/resource"

// TestQ4Extended_RelabelledMappedInputRequeuesBothParents: an InputQMapped
// input moved from one parent to another (its label changed) reaches
// MapInput with its previous version (controller.PreviousOf), so that
// MapInput requeues the parent it left as well as the one it joined; a
// change of its spec alone reaches MapInput as a plain pointer.
func (s *RuntimeSuite) TestQ4Extended_RelabelledMappedInputRequeuesBothParents() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QParentController{ControllerName: "q"}
		e.registerQController(q)
		e.start()
		e.settle()

		e.create(labelledStr("m1", "v1", "p1"), "")
		e.eventually(func() bool { return q.Reconciles("p1") == 1 }, "Q4: a mapped input reconciles the parent its label names")
		e.editStr(MappedNamespace, "m1", func(r *StrResource) { r.TypedSpec().Value = "v2" })
		e.eventually(func() bool { return q.Reconciles("p1") == 2 }, "Q4: a mapped update reconciles the parent")
		e.editStr(MappedNamespace, "m1", func(r *StrResource) { r.Metadata().Labels().Set(ParentLabel, "p2") })
		e.eventually(func() bool { return q.Reconciles("p2") == 1 }, "Q4: the relabelled input reconciles its new parent")
		e.eventually(func() bool { return q.Reconciles("p1") == 3 },
			"Q4 extended: the relabelled input reconciles the parent it left (MapInput saw: %+v)", q.MapCalls("m1"))

		calls := q.MapCalls("m1")
		e.require.Len(calls, 3)
		e.assert.False(calls[1].HasPrevious, "Q4 extended: a change of the spec alone reaches MapInput as a plain pointer")
		e.assert.Equal(MapCall{ID: "m1", Parent: "p2", HasPrevious: true, Previous: "p1", Version: 3,
			Phase: resource.PhaseRunning, Spec: "v2"}, normalized(calls[2]),
			"Q4 extended: the relabel reaches MapInput with the previous version")
	})
}

// TestQ4Extended_CoalescedUpdateThenRelabel: an update of a mapped input's
// spec followed by a relabel, coalesced into one MapInput item (the item
// waits behind another), reaches MapInput once with the version before
// both as its previous version: the parent it left is requeued.
func (s *RuntimeSuite) TestQ4Extended_CoalescedUpdateThenRelabel() {
	s.inBubble(func(e *runtimeEnv) {
		gate := make(chan struct{})
		q := &QParentController{ControllerName: "q", MapGate: gate}
		e.registerQController(q)
		e.start()
		e.settle()
		e.hold("q") // its MapInput calls wait on the gate
		e.create(labelledStr("m1", "v1", "p1"), "")
		e.require.True(e.release(gate), "MapInput of m1 waits on the gate")
		e.eventually(func() bool { return q.Reconciles("p1") == 1 }, "Q4: a mapped input reconciles its parent")

		e.create(labelledStr("blocker", "", "b"), "") // keeps the only worker busy
		e.settle()
		e.editStr(MappedNamespace, "m1", func(r *StrResource) { r.TypedSpec().Value = "v2" })
		e.editStr(MappedNamespace, "m1", func(r *StrResource) { r.Metadata().Labels().Set(ParentLabel, "p2") })
		e.settle() // every change routed: m1's item waits behind the blocker

		e.require.True(e.release(gate), "MapInput of the blocker waits on the gate")
		e.require.True(e.release(gate), "MapInput of m1 waits on the gate")
		e.hold()
		e.settle()
		e.assert.False(e.releaseIfWaiting(gate), "no other MapInput call")
		e.eventually(func() bool { return q.Reconciles("p2") == 1 && q.Reconciles("p1") == 2 },
			"Q4 extended: the coalesced relabel reconciles the parent it left and the one it joined")
		calls := q.MapCalls("m1")
		e.require.Len(calls, 2)
		e.assert.Equal(MapCall{ID: "m1", Parent: "p2", HasPrevious: true, Previous: "p1", Version: 3,
			Phase: resource.PhaseRunning, Spec: "v2"}, normalized(calls[1]),
			"Q4 extended: one MapInput call for the coalesced changes, with the version before them")
	})
}
