package conformance

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/suite"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// StateSuite is a testify suite that checks a [state.State] against rules
// R3 and S1–S15 of the contract, one or more tests per rule, named after it
// (TestS1_..., TestS12_...). It uses only the public API.
//
// Run it from a test of the implementation:
//
//	suite.Run(t, &conformance.StateSuite{
//		NewState:        func() state.State { return inmem.NewState(inmem.WithHistoryCapacity(64)) },
//		HistoryCapacity: 64,
//	})
//
// Every test works in a namespace of its own ("conformance-<n>") with the
// example resources [IntResource] and [StrResource], so the State must
// accept any namespace. Every test ends within its own deadline (10 s) and
// cancels every watch it started; leaks are left to the caller's
// goleak.VerifyTestMain, and rule S13 is also checked directly by counting
// goroutines, so do not run the suite in parallel with other tests.
type StateSuite struct {
	suite.Suite

	// State is the state under test. When NewState is set, it is replaced
	// by a fresh one before each test.
	State state.State

	// NewState, when set, makes a fresh empty State before each test. When
	// nil, State is used as is by every test (each test still uses its own
	// namespace, so tests do not see each other's resources).
	NewState func() state.State

	// HistoryCapacity is the number of changes per kind the State keeps for
	// tail events and bookmarks (S11), and so the longest backlog a stalled
	// watcher may be sent uncoalesced (S12). When positive, the suite
	// writes more changes than that to check that a bookmark past the kept
	// history is refused with a buffer-overrun error (skipped when zero),
	// and expects a stalled watcher to get at most twice that many events
	// plus two per resource. The S12 workloads write a few thousand changes, so
	// configure the State with a capacity of a few hundred at most.
	HistoryCapacity int

	ctx    context.Context
	cancel context.CancelFunc
	ns     resource.Namespace
}

// testTimeout bounds every test of the suite. It is a deadline for what
// is wrong (a blocked writer, a watch that never delivers), not a speed
// check: the heaviest test (TestS12_SlowKindWatcher, 4,400 writes) must
// fit well within it on a networked state under -race on a loaded
// machine.
const testTimeout = 30 * time.Second

// nsCounter makes the namespace of every test unique within the process.
var nsCounter atomic.Int64

// SetupTest makes a fresh State (when NewState is set), a namespace and a
// context for the test.
func (s *StateSuite) SetupTest() {
	if s.NewState != nil {
		s.State = s.NewState()
	}
	s.Require().NotNil(s.State, "StateSuite needs State or NewState")
	s.ctx, s.cancel = context.WithTimeout(context.Background(), testTimeout)
	s.ns = fmt.Sprintf("conformance-%d", nsCounter.Add(1))
}

// TearDownTest cancels the test's context, ending every watch it started.
func (s *StateSuite) TearDownTest() {
	s.cancel()
}

// intRes returns a new IntResource in the test's namespace.
func (s *StateSuite) intRes(id resource.ID, v int) *IntResource {
	return NewIntResource(s.ns, id, v)
}

// ptr points to the IntResource id in the test's namespace.
func (s *StateSuite) ptr(id resource.ID) resource.Pointer {
	return resource.NewPointer(s.ns, IntResourceType, id)
}

// kind is the IntResource kind in the test's namespace.
func (s *StateSuite) kind() resource.Kind {
	return resource.NewKind(s.ns, IntResourceType)
}

// create creates an IntResource id holding v.
func (s *StateSuite) create(id resource.ID, v int, opts ...state.CreateOption) *IntResource {
	r := s.intRes(id, v)
	s.Require().NoError(s.State.Create(s.ctx, r, opts...))
	return r
}

// get reads the IntResource id.
func (s *StateSuite) get(id resource.ID) *IntResource {
	r, err := s.State.Get(s.ctx, s.ptr(id))
	s.Require().NoError(err)
	return s.asInt(r)
}

// set writes value v into the IntResource id (any phase, owner kept).
func (s *StateSuite) set(id resource.ID, v int) *IntResource {
	r := s.get(id)
	r.TypedSpec().Value = v
	s.Require().NoError(s.State.Update(s.ctx, r, state.WithUpdateOwner(r.Metadata().Owner()), state.WithExpectedPhaseAny()))
	return r
}

// asInt converts r to an *IntResource, failing the test otherwise.
func (s *StateSuite) asInt(r resource.Resource) *IntResource {
	ir, ok := r.(*IntResource)
	s.Require().Truef(ok, "resource %s is a %T, not an *IntResource", resource.String(r), r)
	return ir
}

// version returns r's version as an integer.
func version(r resource.Resource) uint64 { return r.Metadata().Version().Value() }

// watch starts a Watch of the IntResource id with a channel of capacity
// size and returns the channel. The watch ends with the test.
func (s *StateSuite) watch(id resource.ID, size int, opts ...state.WatchOption) chan state.Event {
	ch := make(chan state.Event, size)
	s.Require().NoError(s.State.Watch(s.ctx, s.ptr(id), ch, opts...))
	return ch
}

// watchKind starts a WatchKind of the IntResource kind.
func (s *StateSuite) watchKind(size int, opts ...state.WatchKindOption) chan state.Event {
	ch := make(chan state.Event, size)
	s.Require().NoError(s.State.WatchKind(s.ctx, s.kind(), ch, opts...))
	return ch
}

// next receives the next event or fails the test at its deadline.
func (s *StateSuite) next(ch <-chan state.Event) state.Event {
	s.T().Helper()
	select {
	case ev := <-ch:
		return ev
	case <-s.ctx.Done():
		s.FailNow("timed out waiting for a watch event")
		return state.Event{}
	}
}

// expectEvent receives the next event and checks its type, ID and version
// (a version of 0 is not checked).
func (s *StateSuite) expectEvent(ch <-chan state.Event, typ state.EventType, id resource.ID, ver uint64) state.Event {
	s.T().Helper()
	ev := s.next(ch)
	s.Require().Equalf(typ, ev.Type, "event %s", eventString(ev))
	s.Require().NotNil(ev.Resource, "event %s", eventString(ev))
	s.Require().Equalf(id, ev.Resource.Metadata().ID(), "event %s", eventString(ev))
	if ver != 0 {
		s.Require().Equalf(ver, version(ev.Resource), "event %s", eventString(ev))
	}
	return ev
}

// expectEmpty checks that nothing is waiting in ch.
func (s *StateSuite) expectEmpty(ch <-chan state.Event) {
	s.T().Helper()
	select {
	case ev := <-ch:
		s.Failf("unexpected event", "event %s", eventString(ev))
	default:
	}
}

// eventString formats an event for failure messages.
func eventString(ev state.Event) string {
	str := ev.Type.String()
	if ev.Resource != nil {
		str += " " + ev.Resource.Metadata().String()
	}
	if ev.Old != nil {
		str += " old=" + ev.Old.Metadata().String()
	}
	if ev.Error != nil {
		str += " error=" + ev.Error.Error()
	}
	return str
}
