package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Sizes of the slow-watcher workload (S12): far more writes than any
// reasonable per-watcher buffer, so a state that queued every change for a
// stalled watcher instead of coalescing would be caught.
const (
	slowSteady = 10  // resources updated all along
	slowRounds = 400 // updates per steady resource
	slowDoomed = 5   // resources created, updated, then destroyed
	slowFresh  = 5   // resources created late and kept
)

// TestS12_SlowKindWatcher: a kind watcher that does not read while many
// changes happen blocks neither the writer nor another watcher, and when it
// reads it gets the final state of every resource through coalesced events
// that follow the derivation rules, without an Errored event and with far
// fewer events than changes. The newest coalesced event carries the
// bookmark of the newest change.
//
// The workload is thousands of round trips on a networked state, long under
// -race on a loaded machine: the test is bounded by progress, not in total
// (a writer that completes no write for testTimeout is blocked; each event
// the stalled watcher reads is due within testTimeout), so that its
// duration is no threshold while a blocked writer or a lost event still
// fails it.
func (s *StateSuite) TestS12_SlowKindWatcher() {
	whole := s.cancel // the test's context, canceled at its end
	defer whole()
	s.ctx, s.cancel = context.WithCancel(context.Background())
	slow := s.watchKind(0)
	fast := s.watchKind(1)

	fastView := newWatchView()
	var fastMu sync.Mutex // guards fastView
	fastCtx, stopFast := context.WithCancel(s.ctx)
	var fastWG sync.WaitGroup
	fastWG.Go(func() {
		for {
			select {
			case ev := <-fast:
				fastMu.Lock()
				fastView.apply(ev)
				fastMu.Unlock()
			case <-fastCtx.Done():
				return
			}
		}
	})
	defer func() {
		stopFast()
		fastWG.Wait()
	}()

	writes := 0
	var progress atomic.Int64 // writes completed, for the stall check
	writerDone := make(chan error, 1)
	go func() {
		writerDone <- func() error {
			write := func(err error) error {
				writes++
				progress.Add(1)
				return err
			}
			for i := range slowSteady {
				if err := write(s.State.Create(s.ctx, s.intRes(fmt.Sprintf("steady%02d", i), 0))); err != nil {
					return err
				}
			}
			for i := range slowDoomed {
				if err := write(s.State.Create(s.ctx, s.intRes(fmt.Sprintf("doomed%02d", i), 0))); err != nil {
					return err
				}
			}
			last := s.intRes("zz-last", 0)
			if err := write(s.State.Create(s.ctx, last)); err != nil {
				return err
			}
			for round := 1; round <= slowRounds; round++ {
				if err := s.updateSteady(round, &progress); err != nil {
					return err
				}
				writes += slowSteady
				switch round {
				case slowRounds / 4:
					for i := range slowDoomed {
						if err := write(s.State.Destroy(s.ctx, s.ptr(fmt.Sprintf("doomed%02d", i)))); err != nil {
							return err
						}
					}
				case slowRounds / 2:
					for i := range slowFresh {
						if err := write(s.State.Create(s.ctx, s.intRes(fmt.Sprintf("fresh%02d", i), round))); err != nil {
							return err
						}
					}
				}
				last.TypedSpec().Value = round
				if err := write(s.State.Update(s.ctx, last)); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	if ok, err := untilDone(writerDone, &progress); !ok {
		s.cancel() // ends the writer's blocked call, and the watches
		<-writerDone
		s.FailNow("the writer was blocked by a watcher that does not read: no write completed for " + testTimeout.String())
	} else {
		s.Require().NoError(err)
	}
	final := s.listVersions()
	s.Require().Len(final, slowSteady+slowFresh+1)

	// The other watcher keeps up while the slow one still stalls.
	s.Require().Eventually(func() bool {
		fastMu.Lock()
		defer fastMu.Unlock()
		return fastView.matches(final)
	}, testTimeout/2, time.Millisecond, "the reading watcher did not reach the final state while another watcher stalled")
	fastMu.Lock()
	s.Empty(fastView.problems, "the reading watcher")
	fastMu.Unlock()

	slowView := newWatchView()
	var lastEvent state.Event
	for !slowView.matches(final) {
		ev := s.nextWithin(slow, testTimeout)
		slowView.apply(ev)
		if ev.Resource != nil && ev.Resource.Metadata().ID() == "zz-last" {
			lastEvent = ev
		}
	}
	s.Empty(slowView.problems)
	s.expectCoalesced(slowView.events, writes, slowSteady+slowDoomed+slowFresh+1)

	// zz-last was written last: its coalesced event carries the bookmark of
	// the newest change, so resuming from it replays nothing. From here on
	// the test has a deadline again.
	long := s.cancel
	defer long()
	s.ctx, s.cancel = context.WithTimeout(s.ctx, testTimeout)
	s.Require().NotEmpty(lastEvent.Bookmark)
	resumed := s.watchKind(eventBuffer, state.WithKindStartFromBookmark(lastEvent.Bookmark))
	s.set("steady00", -1)
	s.expectEvent(resumed, state.Updated, "steady00", final["steady00"]+1)
}

// updateSteady sets every steady resource to round (a Get and an Update
// each), the resources side by side: a round costs the state's longest
// write, not the sum of them, so that a networked state's round trips do
// not bring the workload near the test's deadline. Every update is
// waited for before it returns.
func (s *StateSuite) updateSteady(round int, progress *atomic.Int64) error {
	var (
		wg   sync.WaitGroup
		errs [slowSteady]error
	)
	for i := range slowSteady {
		wg.Go(func() {
			r, err := s.State.Get(s.ctx, s.ptr(fmt.Sprintf("steady%02d", i)))
			if err == nil {
				err = setValue(r, round)
			}
			if err == nil {
				err = s.State.Update(s.ctx, r)
			}
			progress.Add(1)
			errs[i] = err
		})
	}
	wg.Wait()
	return errors.Join(errs[:]...)
}

// untilDone waits for done's error while progress moves: it returns false
// when progress stood still for testTimeout.
func untilDone(done <-chan error, progress *atomic.Int64) (bool, error) {
	t := time.NewTimer(testTimeout)
	defer t.Stop()
	last := progress.Load()
	for {
		select {
		case err := <-done:
			return true, err
		case <-t.C:
			now := progress.Load()
			if now == last {
				return false, nil
			}
			last = now
			t.Reset(testTimeout)
		}
	}
}

// nextWithin receives the next event, failing the test when none comes
// within d.
func (s *StateSuite) nextWithin(ch <-chan state.Event, d time.Duration) state.Event {
	s.T().Helper()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case ev := <-ch:
		return ev
	case <-t.C:
		s.FailNow("no watch event within " + d.String())
		return state.Event{}
	}
}

// expectCoalesced checks that a watcher that stalled while changes
// happened to the given number of resources received far fewer events than
// changes: at most twice HistoryCapacity (the backlog it may be sent
// uncoalesced, plus what it may have taken in before it fell behind) plus
// two per resource. Without
// HistoryCapacity the state's backlog bound is unknown and this check is
// skipped.
func (s *StateSuite) expectCoalesced(events, changes, resources int) {
	s.T().Helper()
	if s.HistoryCapacity <= 0 {
		s.T().Logf("HistoryCapacity is not set: not checking the %d events for %d changes against a bound", events, changes)
		return
	}
	limit := 2*s.HistoryCapacity + 2*resources
	s.Require().Lessf(limit, changes/2, "HistoryCapacity %d is too large for the S12 workload", s.HistoryCapacity)
	s.LessOrEqualf(events, limit, "a stalled watcher got %d events for %d changes to %d resources: its backlog was not coalesced", events, changes, resources)
}

// TestS12_SlowResourceWatcher: a single-resource watcher that does not read
// while the resource changes many times gets, when it reads, increasing
// versions ending at the final state, with Old always the state it last
// saw.
func (s *StateSuite) TestS12_SlowResourceWatcher() {
	s.create("a", 0)
	ch := s.watch("a", 0)
	const updates = 2000
	done := make(chan error, 1)
	go func() {
		for v := 1; v <= updates; v++ {
			r, err := s.State.Get(s.ctx, s.ptr("a"))
			if err == nil {
				err = setValue(r, v)
			}
			if err == nil {
				err = s.State.Update(s.ctx, r)
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		s.Require().NoError(err)
	case <-s.ctx.Done():
		s.FailNow("the writer was blocked by a watcher that does not read")
	}

	v := newWatchView()
	s.converge(ch, v, map[resource.ID]uint64{"a": updates + 1})
	s.Equal(updates, s.asInt(v.seen["a"]).TypedSpec().Value)
	s.expectCoalesced(v.events, updates, 1)

	// Destroyed after it was seen: reported.
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("a")))
	ev := s.next(ch)
	s.Equal(state.Destroyed, ev.Type, eventString(ev))
}

// TestS12_NeverSeenThenGone: resources created and destroyed while a
// watcher stalls are coalesced away: the watcher is never told about a
// resource it never saw that is gone (a Destroyed for one it does not hold
// is a failure, and Created+Destroyed pairs for all of them would exceed
// the event bound).
func (s *StateSuite) TestS12_NeverSeenThenGone() {
	const gone = 200
	s.create("first", 0)
	ch := s.watchKind(0, state.WithBootstrapContents(true))
	v := newWatchView()
	for !v.bootstrapped {
		v.apply(s.next(ch))
	}
	events := v.events

	changes := 0
	for i := range gone {
		id := fmt.Sprintf("gone%03d", i)
		s.create(id, 0)
		s.set(id, 1)
		s.Require().NoError(s.State.Destroy(s.ctx, s.ptr(id)))
		changes += 3
	}
	s.set("first", 1)
	changes++

	s.converge(ch, v, map[resource.ID]uint64{"first": 2})
	s.expectCoalesced(v.events-events, changes, 1)
}

// TestS12_StalledWatcherGetsTheLastStateOfADestroy: a resource updated and
// then destroyed while a kind watcher stalls (on its bootstrap, so that the
// whole span is backlog, coalesced when it exceeds the history) reaches the
// watcher as a Destroyed event whose Resource is the state it was
// destroyed in — its labels and value as last stored, not the older state
// the watcher saw — and whose Old, when set, is the state the watcher saw.
// A Runtime hands that state to the mappers of destroyed inputs.
func (s *StateSuite) TestS12_StalledWatcherGetsTheLastStateOfADestroy() {
	s.create("doomed", 1)
	ch := s.watchKind(0, state.WithBootstrapContents(true)) // stalls sending its bootstrap

	r := s.get("doomed")
	r.TypedSpec().Value = 2
	r.Metadata().Labels().Set("parent", "p1")
	s.Require().NoError(s.State.Update(s.ctx, r))
	s.Require().NoError(s.State.Destroy(s.ctx, s.ptr("doomed")))
	fillers := 2*s.HistoryCapacity + 64 // past the history: coalesced
	s.create("filler", 0)
	for v := 1; v <= fillers; v++ {
		s.set("filler", v)
	}

	v := newWatchView()
	var (
		destroyed *state.Event
		saw       resource.Resource // what the watcher saw before the Destroyed
	)
	for !v.matches(map[resource.ID]uint64{"filler": uint64(fillers + 1)}) {
		ev := s.next(ch)
		if ev.Type == state.Destroyed && ev.Resource.Metadata().ID() == "doomed" {
			destroyed, saw = &ev, v.seen["doomed"]
		}
		v.apply(ev)
	}
	s.Empty(v.problems)
	s.Require().NotNil(destroyed, "no Destroyed event for the destroyed resource")
	last := s.asInt(destroyed.Resource)
	s.Equal(2, last.TypedSpec().Value, "a Destroyed event carries the last stored state")
	s.Equal(uint64(2), version(last))
	parent, _ := last.Metadata().Labels().Get("parent")
	s.Equal("p1", parent, "with its last labels")
	if destroyed.Old != nil && saw != nil {
		s.Equal(version(saw), version(destroyed.Old), "and the state the watcher saw as Old")
	}
}

// TestS13_WatchesEndOnCancel: when a watch's context is canceled, its
// goroutines exit and nothing more is sent on its channel.
func (s *StateSuite) TestS13_WatchesEndOnCancel() {
	s.create("a", 0)
	// Poll in this goroutine (require.Eventually would count its own).
	waitGoroutines := func(limit int) {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for runtime.NumGoroutine() > limit {
			select {
			case <-tick.C:
			case <-s.ctx.Done():
				s.FailNowf("watch goroutines did not exit", "%d goroutines, %d before the watches", runtime.NumGoroutine(), limit)
			}
		}
	}
	baseline := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(s.ctx)
	const each = 5
	single := make(chan state.Event)
	kind := make(chan state.Event)
	agg := make(chan []state.Event)
	for range each {
		s.Require().NoError(s.State.Watch(ctx, s.ptr("a"), single))
		s.Require().NoError(s.State.WatchKind(ctx, s.kind(), kind, state.WithBootstrapContents(true)))
		s.Require().NoError(s.State.WatchKindAggregated(ctx, s.kind(), agg, state.WithBootstrapContents(true)))
	}
	s.next(single) // at least one is live
	s.set("a", 1)  // leave sends pending on every watch
	cancel()
	waitGoroutines(baseline)

	s.set("a", 2)
	select {
	case ev := <-single:
		s.Failf("Watch sent after cancel", "%s", eventString(ev))
	case ev := <-kind:
		s.Failf("WatchKind sent after cancel", "%s", eventString(ev))
	case b := <-agg:
		s.Failf("WatchKindAggregated sent after cancel", "%d events", len(b))
	default:
	}
}

// TestS14_ConcurrentUse: concurrent writers, readers and watchers; every
// increment is applied exactly once and every watcher converges (run under
// go test -race).
func (s *StateSuite) TestS14_ConcurrentUse() {
	const workers, incs = 6, 25
	s.create("counter", 0)
	watch := s.watchKind(8, state.WithBootstrapContents(true))
	view := newWatchView()

	var wg sync.WaitGroup
	errs := make(chan error, 3*workers)
	for w := range workers {
		wg.Go(func() {
			for range incs {
				_, err := s.State.UpdateWithConflicts(s.ctx, s.ptr("counter"), func(r resource.Resource) error {
					ir, ok := r.(*IntResource)
					if !ok {
						return fmt.Errorf("updater got a %T", r)
					}
					ir.TypedSpec().Value++
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			id := fmt.Sprintf("own%d", w)
			for i := range incs {
				err := s.State.Modify(s.ctx, s.intRes(id, 0), func(r resource.Resource) error {
					r.Metadata().Labels().Set("worker", fmt.Sprint(w))
					return setValue(r, i)
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range incs {
				if _, err := s.State.List(s.ctx, s.kind()); err != nil {
					errs <- err
					return
				}
				if _, err := s.State.Get(s.ctx, s.ptr("counter")); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.Require().NoError(err)
	}
	got := s.get("counter")
	s.Equal(workers*incs, got.TypedSpec().Value)
	s.Equal(uint64(workers*incs+1), version(got))
	s.converge(watch, view, s.listVersions())
}

// setValue sets the value of an IntResource; it is safe to call from any
// goroutine (it reports a wrong type instead of failing the test).
func setValue(r resource.Resource, v int) error {
	ir, ok := r.(*IntResource)
	if !ok {
		return fmt.Errorf("resource %s is a %T, not an *IntResource", resource.String(r), r)
	}
	ir.TypedSpec().Value = v
	return nil
}
