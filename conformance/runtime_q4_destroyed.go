package conformance

import (
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// editStr changes the user-owned StrResource ns/id with edit (any phase).
func (e *runtimeEnv) editStr(ns resource.Namespace, id resource.ID, edit func(*StrResource)) {
	e.t.Helper()
	r, err := e.state.Get(e.ctx, strPtr(ns, id))
	e.require.NoError(err, "get StrResource %s/%s", ns, id)
	s, err := as[*StrResource](r)
	e.require.NoError(err)
	edit(s)
	e.require.NoError(e.state.Update(e.ctx, s, state.WithExpectedPhaseAny()), "update StrResource %s/%s", ns, id)
}

// labelledStr returns a StrResource in MappedNamespace labelled with its
// parent.
func labelledStr(id resource.ID, value, parent string) *StrResource {
	r := NewStrResource(MappedNamespace, id, value)
	if parent != "" {
		r.Metadata().Labels().Set(ParentLabel, parent)
	}
	return r
}

// TestQ4_DestroyedMappedInputKeepsItsMetadata: a destroyed InputQMapped
// input reaches MapInput as a controller.DestroyedInput with its last
// stored metadata (labels, annotations, owner, phase, finalizers, version)
// and spec, so that a MapInput mapping by a label maps the destruction to
// the same primary pointer as the changes before it; live changes reach
// it as plain pointers.
func (s *RuntimeSuite) TestQ4_DestroyedMappedInputKeepsItsMetadata() {
	s.inBubble(func(e *runtimeEnv) {
		q := &QParentController{ControllerName: "q"}
		e.registerQController(q)
		e.start()
		e.settle()

		m := labelledStr("m1", "v1", "p1")
		m.Metadata().Annotations().Set("note", "kept")
		m.Metadata().Finalizers().Add("hold")
		e.create(m, "")
		e.eventually(func() bool { return q.Reconciles("p1") == 1 }, "Q4: a mapped change reconciles the parent its label names")
		e.editStr(MappedNamespace, "m1", func(r *StrResource) { r.TypedSpec().Value = "v2" })
		e.eventually(func() bool { return q.Reconciles("p1") == 2 }, "Q4: a mapped update reconciles the parent")
		_, err := e.state.Teardown(e.ctx, strPtr(MappedNamespace, "m1"))
		e.require.NoError(err)
		e.eventually(func() bool { return q.Reconciles("p1") == 3 }, "Q4: a mapped teardown reconciles the parent")
		e.require.NoError(e.state.RemoveFinalizer(e.ctx, strPtr(MappedNamespace, "m1"), "hold"))
		e.eventually(func() bool { return q.Reconciles("p1") == 4 }, "Q4: a removed finalizer reconciles the parent")
		last := e.get(strPtr(MappedNamespace, "m1")).Metadata().Version().Value()
		e.destroy(strPtr(MappedNamespace, "m1"))
		e.eventually(func() bool { return q.Reconciles("p1") == 5 },
			"Q4: the destruction of a mapped input labelled parent=p1 reconciles p1 (MapInput saw: %+v)", q.MapCalls("m1"))

		calls := q.MapCalls("m1")
		e.require.NotEmpty(calls)
		for _, c := range calls[:len(calls)-1] {
			e.assert.False(c.Destroyed, "Q4: a live change reaches MapInput as a plain pointer: %+v", c)
		}
		gone := calls[len(calls)-1]
		e.assert.True(gone.Destroyed, "Q4: a destroyed input reaches MapInput as a controller.DestroyedInput")
		e.assert.Equal(MapCall{
			ID: "m1", Destroyed: true, Parent: "p1", Annotations: map[string]string{"note": "kept"},
			Version: last, Phase: resource.PhaseTearingDown, Finalizers: nil, Spec: "v2",
		}, normalized(gone), "Q4: with its last stored metadata and spec")
	})
}

// normalized returns c with empty finalizers and annotations as nil, for
// comparisons.
func normalized(c MapCall) MapCall {
	if len(c.Finalizers) == 0 {
		c.Finalizers = nil
	}
	if len(c.Annotations) == 0 {
		c.Annotations = nil
	}
	return c
}

// TestQ4_CoalescedDestroyKeepsTheLastMetadata: a mapped input created,
// labelled and destroyed while its MapInput item waits (the changes
// coalesce into one item) reaches MapInput once, as destroyed, with the
// labels of its last stored version — not with the labels (none) it was
// created with, and not as a bare pointer.
func (s *RuntimeSuite) TestQ4_CoalescedDestroyKeepsTheLastMetadata() {
	s.inBubble(func(e *runtimeEnv) {
		gate := make(chan struct{})
		q := &QParentController{ControllerName: "q", MapGate: gate}
		e.registerQController(q)
		e.hold("q") // its MapInput calls wait on the gate
		e.start()
		e.settle()

		e.create(labelledStr("blocker", "", "b"), "") // keeps the only worker busy
		e.settle()
		e.create(labelledStr("m1", "v1", ""), "")
		e.editStr(MappedNamespace, "m1", func(r *StrResource) {
			r.Metadata().Labels().Set(ParentLabel, "p1")
			r.TypedSpec().Value = "v2"
		})
		e.destroy(strPtr(MappedNamespace, "m1"))
		e.settle() // every change routed: m1's item waits behind the blocker

		e.require.True(e.release(gate), "MapInput of the blocker waits on the gate")
		e.require.True(e.release(gate), "MapInput of m1 waits on the gate")
		e.hold()
		e.settle()
		e.assert.False(e.releaseIfWaiting(gate), "no other MapInput call")
		e.eventually(func() bool { return q.Reconciles("p1") == 1 }, "Q4: the coalesced destruction maps to the parent of the last labels")
		e.assert.Equal([]MapCall{{ID: "m1", Destroyed: true, Parent: "p1", Version: 2,
			Phase: resource.PhaseRunning, Spec: "v2", HasPrevious: true, Previous: ""}}, normalizedAll(q.MapCalls("m1")),
			"Q4: one MapInput call for the coalesced changes, as destroyed, with the last stored metadata (and, Q4 extended, the version before its relabel)")
	})
}

func normalizedAll(calls []MapCall) []MapCall {
	out := make([]MapCall, 0, len(calls))
	for _, c := range calls {
		out = append(out, normalized(c))
	}
	return out
}

// TestQ4_RecreatedMappedInputIsLive: a mapped input destroyed and created
// again before its MapInput item runs reaches MapInput as a plain pointer
// (it exists), and MapInput reads the new resource.
func (s *RuntimeSuite) TestQ4_RecreatedMappedInputIsLive() {
	s.inBubble(func(e *runtimeEnv) {
		gate := make(chan struct{})
		q := &QParentController{ControllerName: "q", MapGate: gate}
		e.create(labelledStr("m1", "v1", "p1"), "")
		e.registerQController(q)
		e.hold("q")
		e.start()
		e.require.True(e.release(gate), "MapInput of m1 (initial fill) waits on the gate")
		e.settle()

		e.create(labelledStr("blocker", "", "b"), "") // keeps the only worker busy
		e.settle()
		e.destroy(strPtr(MappedNamespace, "m1"))
		e.create(labelledStr("m1", "v9", "p2"), "")
		e.settle()
		e.require.True(e.release(gate), "MapInput of the blocker waits on the gate")
		e.require.True(e.release(gate), "MapInput of m1 waits on the gate")
		e.hold()
		e.settle()
		e.assert.False(e.releaseIfWaiting(gate), "no other MapInput call")
		calls := q.MapCalls("m1")
		e.require.Len(calls, 2, "one call at start, one for the coalesced destroy and create")
		e.assert.False(calls[1].Destroyed, "Q4: an input created again is not destroyed")
		e.assert.Equal("p2", calls[1].Parent, "MapInput reads the new resource")
	})
}
