package conformance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/suite"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// The two namespaces of [CrossBackendSuite], which the State under test
// serves from two different backends.
const (
	CrossNamespaceA resource.Namespace = "cross-a"
	CrossNamespaceB resource.Namespace = "cross-b"
)

// CrossBackendSuite is a testify suite that checks what holds across the
// namespaces of one [state.State] that live in different backends (rule
// P1: a routed state, package pkg/state/routed). [StateSuite] and
// [RuntimeSuite] check the per-kind rules over such a state (each kind
// lives in one backend); this suite checks what is said across backends:
//
//   - each namespace is served by its backend alone (TestP1_EachNamespaceLivesInItsBackend);
//   - the rules of one kind hold in each backend side by side, with
//     writes and watches of the other going on (TestP1_PerKindRulesHoldInEachBackend);
//   - a revision across backends: either the State answers
//     [state.RevisionReporter] with one sequence over every backend (a
//     write's revision is higher than that of any write that returned
//     before it, in any namespace), or it says it has none — Revision
//     fails with an error matching [errors.ErrUnsupported], or the State
//     does not implement the interface (TestP1_RevisionAcrossBackendsIsOneSequenceOrNone).
//
// Run it from a test of the implementation:
//
//	suite.Run(t, &conformance.CrossBackendSuite{
//		NewState: func(t *testing.T) (st, a, b state.State) {
//			a, b = inmem.NewState(), inmem.NewState()
//			st, err := routed.New([]routed.Rule{routed.Exact(conformance.CrossNamespaceA, a), routed.Exact(conformance.CrossNamespaceB, b)})
//			require.NoError(t, err)
//			return st, a, b
//		},
//	})
type CrossBackendSuite struct {
	suite.Suite

	// NewState returns, before each test, a fresh empty State that serves
	// CrossNamespaceA from backend a and CrossNamespaceB from backend b,
	// two different states, which the suite reads directly to check where
	// each resource lives.
	NewState func(t *testing.T) (st, a, b state.State)

	st, a, b state.State
	ctx      context.Context
	cancel   context.CancelFunc
}

// SetupTest makes the test's State and context.
func (s *CrossBackendSuite) SetupTest() {
	s.Require().NotNil(s.NewState, "CrossBackendSuite needs NewState")
	s.st, s.a, s.b = s.NewState(s.T())
	s.ctx, s.cancel = context.WithTimeout(context.Background(), testTimeout)
}

// TearDownTest ends the test's watches.
func (s *CrossBackendSuite) TearDownTest() { s.cancel() }

// TestP1_EachNamespaceLivesInItsBackend: a resource written through the
// State is in its namespace's backend and not in the other, and a
// resource written to a backend directly is read through the State.
func (s *CrossBackendSuite) TestP1_EachNamespaceLivesInItsBackend() {
	pa, pb := resource.NewPointer(CrossNamespaceA, IntResourceType, "x"), resource.NewPointer(CrossNamespaceB, IntResourceType, "x")
	s.Require().NoError(s.st.Create(s.ctx, NewIntResource(CrossNamespaceA, "x", 1)))
	s.Require().NoError(s.st.Create(s.ctx, NewIntResource(CrossNamespaceB, "x", 2)))
	for _, c := range []struct {
		p         resource.Pointer
		home, not state.State
		value     int
	}{{pa, s.a, s.b, 1}, {pb, s.b, s.a, 2}} {
		r, err := c.home.Get(s.ctx, c.p)
		s.Require().NoError(err, "P1: %s is in its backend", resource.PointerString(c.p))
		s.Equal(c.value, r.(*IntResource).TypedSpec().Value)
		_, err = c.not.Get(s.ctx, c.p)
		s.True(state.IsNotFoundError(err), "P1: %s is not in the other backend: %v", resource.PointerString(c.p), err)
	}
	s.Require().NoError(s.b.Create(s.ctx, NewIntResource(CrossNamespaceB, "direct", 3)))
	l, err := s.st.List(s.ctx, resource.NewKind(CrossNamespaceB, IntResourceType))
	s.Require().NoError(err)
	s.Len(l.Items, 2, "P1: the state lists what its backend holds")
	l, err = s.st.List(s.ctx, resource.NewKind(CrossNamespaceA, IntResourceType))
	s.Require().NoError(err)
	s.Len(l.Items, 1, "P1: a namespace lists only its own backend's resources")
}

// TestP1_PerKindRulesHoldInEachBackend: in each namespace, while the other
// is written concurrently, creates and updates follow S1 and S2, and a
// kind watch with bootstrap contents receives its kind's changes, in
// order, and nothing of the other namespace (S9).
func (s *CrossBackendSuite) TestP1_PerKindRulesHoldInEachBackend() {
	const writes = 50
	chs := map[resource.Namespace]chan state.Event{}
	for _, ns := range []resource.Namespace{CrossNamespaceA, CrossNamespaceB} {
		chs[ns] = make(chan state.Event, 4*writes)
		s.Require().NoError(s.st.WatchKind(s.ctx, resource.NewKind(ns, IntResourceType), chs[ns], state.WithBootstrapContents(true)))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, ns := range []resource.Namespace{CrossNamespaceA, CrossNamespaceB} {
		wg.Go(func() { errs <- s.writeSequence(ns, writes) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.Require().NoError(err)
	}
	for ns, ch := range chs {
		s.Require().Equal(state.Bootstrapped, s.nextEvent(ch).Type, "P1/S9: %s bootstraps empty", ns)
		for v := 1; v <= writes; v++ {
			ev := s.nextEvent(ch)
			s.Require().NotNil(ev.Resource, "P1/S9: %s: event %s", ns, eventString(ev))
			s.Require().Equal(ns, ev.Resource.Metadata().Namespace(), "P1/S9: a watch of %s gets only its kind", ns)
			s.Require().Equal(uint64(v), version(ev.Resource), "P1/S9: %s: changes in order", ns)
		}
	}
}

// writeSequence creates the IntResource "seq" of ns, updates it to
// version n, checking S1 and S2 on the way.
func (s *CrossBackendSuite) writeSequence(ns resource.Namespace, n int) error {
	r := NewIntResource(ns, "seq", 0)
	if err := s.st.Create(s.ctx, r); err != nil {
		return err
	}
	if err := s.st.Create(s.ctx, NewIntResource(ns, "seq", 0)); !state.IsConflictError(err) {
		return fmt.Errorf("P1/S1: a second create in %s is a conflict, got %v", ns, err)
	}
	stale := r.DeepCopy()
	for v := 2; v <= n; v++ {
		r.TypedSpec().Value = v
		if err := s.st.Update(s.ctx, r); err != nil {
			return err
		}
		if got := version(r); got != uint64(v) {
			return fmt.Errorf("P1/S2: update in %s wrote version %d, want %d", ns, got, v)
		}
	}
	if err := s.st.Update(s.ctx, stale); !state.IsConflictError(err) {
		return fmt.Errorf("P1/S2: a stale update in %s is a conflict, got %v", ns, err)
	}
	return nil
}

// nextEvent receives an event or fails at the test's deadline.
func (s *CrossBackendSuite) nextEvent(ch <-chan state.Event) state.Event {
	s.T().Helper()
	select {
	case ev := <-ch:
		return ev
	case <-s.ctx.Done():
		s.FailNow("timed out waiting for a watch event")
		return state.Event{}
	}
}

// TestP1_RevisionAcrossBackendsIsOneSequenceOrNone: a State whose
// namespaces live in several backends either numbers every change of
// every backend with one sequence (a write's revision, and the kind
// revision of its kind, is higher than those of the writes that returned
// before it, in either namespace) or reports that it has no such revision
// (Revision fails with an error matching errors.ErrUnsupported, or the
// State is no state.RevisionReporter): then the Runtime serves its
// consistent reads without revisions.
func (s *CrossBackendSuite) TestP1_RevisionAcrossBackendsIsOneSequenceOrNone() {
	rr, ok := s.st.(state.RevisionReporter)
	if !ok {
		return // no revisions: nothing to check
	}
	if _, err := rr.Revision(s.ctx); err != nil {
		s.True(errors.Is(err, errors.ErrUnsupported), "P1: Revision over several backends fails only as unsupported: %v", err)
		_, _, err = rr.KindRevision(s.ctx, resource.NewKind(CrossNamespaceA, IntResourceType))
		s.True(errors.Is(err, errors.ErrUnsupported), "P1: KindRevision too: %v", err)
		return
	}
	var last uint64
	for i, ns := range []resource.Namespace{CrossNamespaceA, CrossNamespaceB, CrossNamespaceA, CrossNamespaceB} {
		s.Require().NoError(s.st.Create(s.ctx, NewIntResource(ns, fmt.Sprintf("r%d", i), i)))
		rev, err := rr.Revision(s.ctx)
		s.Require().NoError(err)
		kl, _, err := rr.KindRevision(s.ctx, resource.NewKind(ns, IntResourceType))
		s.Require().NoError(err)
		s.Greater(rev, last, "P1: a write in %s after one in the other backend has a higher revision", ns)
		s.Greater(kl, last, "P1: the kind revision of %s follows the other backend's writes", ns)
		last = rev
	}
}
