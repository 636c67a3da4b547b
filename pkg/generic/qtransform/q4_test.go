package qtransform_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/fixture/family"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// childMapper is the mapper of the reproduction (package family's
// recording mapper): a child C names its parent A by its label "parent".
func childMapper() *family.Mapper[*C] { return &family.Mapper[*C]{Parent: typed.Kind[*A]()} }

// countChildren is a TransformFunc: B.N is the number of children C that
// name A as their parent.
func countChildren(ctx context.Context, r controller.Reader, _ *zap.Logger, a *A, b *B) error {
	children, err := safe.ReaderList[*C](ctx, r, resource.NewKind(fixture.Namespace, kindC.Type()),
		state.WithLabelQuery(resource.LabelEqual("parent", a.Metadata().ID())))
	if err != nil {
		return err
	}
	b.TypedSpec().N = children.Len()
	return nil
}

func child(id, parent string) *C {
	c := fixture.New[fixture.CDef](id, 0)
	if parent != "" {
		c.Metadata().Labels().Set("parent", parent)
	}
	return c
}

// TestQ4_ExtraMappedInputDestroyedKeepsItsLabels is the reproduction of
// issue 18: a qtransform over A (the parent) with an extra mapped input C
// (the child) whose mapper reads Labels().Get("parent"). A child c1
// labelled parent=p1 is created, then destroyed: the mapper sees "p1" both
// times (the second time with InputDestroyed), and the parent's output
// drops the child, instead of keeping it forever.
func TestQ4_ExtraMappedInputDestroyedKeepsItsLabels(t *testing.T) {
	st := newState()
	m := childMapper()
	s := settings("Parents")
	s.TransformFunc = countChildren
	e := runtimetest.Start(t, runtimetest.WithState(st),
		runtimetest.WithQControllers(qtransform.NewQController(s, qtransform.WithExtraMappedInput(m.Map))))
	runtimetest.Create(t, st, newA("p1", 0))
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(fixture.RunningN[*B](0)))

	runtimetest.Create(t, st, child("c1", "p1"))
	runtimetest.Settle(t, e.Runtime)
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(fixture.RunningN[*B](1)))
	require.NoError(t, st.Destroy(context.Background(), typed.Pointer[*C]("c1")))
	runtimetest.Settle(t, e.Runtime)
	assert.Equal(t, []string{"c1=p1", "c1=destroyed:p1"}, m.Calls(), "the mapper sees the parent label of a destroyed child")
	runtimetest.AssertResource(t, st, "p1", runtimetest.Holds(fixture.RunningN[*B](0))) // not stale
}

// TestQ4_ExtraMappedInputCoalescedBurst: a child created unlabelled,
// labelled parent=p1 and destroyed while the mapper is busy with another
// child (the three changes coalesce into one call) is mapped once, as
// destroyed, with the label of its last stored version (and, rule Q4
// extended, with its version before the relabel).
func TestQ4_ExtraMappedInputCoalescedBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newState()
		m := childMapper()
		m.Gate = make(chan struct{})
		s := settings("Parents")
		s.TransformFunc = countChildren
		e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
			runtimetest.WithQControllers(qtransform.NewQController(s, qtransform.WithExtraMappedInput(m.Map))))
		runtimetest.Create(t, st, newA("p1", 0), newA("p2", 0))
		runtimetest.AssertResource(t, st, "p2", runtimetest.Holds(fixture.RunningN[*B](0)))

		runtimetest.Create(t, st, child("blocker", "p2")) // its call holds the only worker
		synctest.Wait()
		ctx := context.Background()
		runtimetest.Create(t, st, child("c1", ""))
		require.NoError(t, st.Modify(ctx, child("c1", ""), func(r resource.Resource) error {
			r.Metadata().Labels().Set("parent", "p1")
			return nil
		}))
		require.NoError(t, st.Destroy(ctx, typed.Pointer[*C]("c1")))
		synctest.Wait() // every change routed: c1's one item waits
		release := func(what string) {
			t.Helper()
			select {
			case m.Gate <- struct{}{}:
			case <-time.After(time.Minute): // virtual time
				require.FailNow(t, "no mapper call waits", "for %s; calls: %v", what, m.Calls())
			}
		}
		release("blocker")
		release("c1")
		close(m.Gate)
		runtimetest.Settle(t, e.Runtime)
		assert.Equal(t, []string{"blocker=p2", "c1=previous:", "c1=destroyed:p1"}, m.Calls(),
			"one item for the coalesced changes: the version before the relabel (Q4, extended), then the last one, as destroyed")
	})
}

// TestQ4Extended_RelabelledChildRequeuesTheParentItLeft: on inmem, a child
// moved from p2 to p1 requeues both (rule Q4, extended).
func TestQ4Extended_RelabelledChildRequeuesTheParentItLeft(t *testing.T) {
	st := newState()
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(family.Controller(m)))
	family.CheckRelabelRequeuesBoth(t, st, st, e.Runtime, m)
}

// TestQ4Extended_CoalescedUpdateThenRelabel: on inmem, an update and a
// relabel coalesced into one MapInput (in both orders) requeue both
// parents.
func TestQ4Extended_CoalescedUpdateThenRelabel(t *testing.T) {
	st := newState()
	m := &family.Mapper[*family.Child]{}
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithQControllers(family.Controller(m)))
	family.CheckCoalescedUpdateThenRelabel(t, st, st, e.Runtime, m)
}
