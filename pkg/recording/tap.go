package recording

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

// changeTapper is a Runtime whose watches a recorder can tap
// (*runtime.Runtime): the kinds it watches need no watch of the
// recorder's own (rule RC8).
type changeTapper interface {
	TapChanges(ctx context.Context, t runtime.ChangeTap, kinds []resource.KindKey) ([]resource.KindKey, func(), error)
}

// tapSink is a session's tap of the Runtime's watches: it holds the
// changes that come while the session lists the kinds, then hands each
// to the window as it comes (under the recorder's lock, on the Runtime's
// watch goroutine).
type tapSink struct {
	r *Recorder
	// kinds are the kinds the Runtime watches, once TapChanges returned
	// them (resolved). Both protected by r.mu.
	kinds    map[resource.KindKey]bool
	resolved bool
	// pending are the changes before the session listed; start is the
	// listed state once it did. Both protected by r.mu.
	pending []state.Event
	start   *startState
	// lost is closed when a tapped kind's watch ended (lostKind names
	// it): the session starts over.
	lost     chan struct{}
	lostOnce sync.Once
	lostKind string
	// stopped is closed when a tapped kind's watch ended because the
	// Runtime stops: the tapped kinds' changes not handed yet never come.
	stopped     chan struct{}
	stoppedOnce sync.Once
	remove      func()
	// handovers are the kinds' passages from the own watches to the tap,
	// for a tap set before the Runtime ran (Attach; nil otherwise; rule
	// RC10). The map is set before the tap, its values protected by r.mu.
	handovers map[resource.KindKey]*handover
	// buf holds the changes handed over while live (nil: none is); live
	// is set once the session listed and every handover passed
	// (goLiveLocked): from then on Changes needs no lock of the
	// recorder's while buf has room.
	buf  *tapBuf
	live atomic.Bool
}

func newTapSink(r *Recorder) *tapSink {
	return &tapSink{r: r, kinds: map[resource.KindKey]bool{}, lost: make(chan struct{}), stopped: make(chan struct{}), remove: func() {}}
}

// resolveLocked notes the kinds the Runtime taps; r.mu is held.
func (s *tapSink) resolveLocked(tapped []resource.KindKey) {
	for _, k := range tapped {
		s.kinds[k] = true
	}
	s.resolved = true
}

// tapRuntime taps the Runtime's watches of the kinds it watches, when the
// recorder records a Runtime that can be tapped; otherwise the sink taps
// nothing (every kind gets a watch of the recorder's own).
func (r *Recorder) tapRuntime(ctx context.Context, kinds []Kind, kick chan<- struct{}) (*tapSink, error) {
	s := newTapSink(r)
	s.buf = &tapBuf{kick: kick}
	rt, ok := r.cfg.rt.(changeTapper)
	if !ok || r.cfg.ownWatches {
		return s, nil
	}
	tapped, remove, err := rt.TapChanges(ctx, s, kindKeys(kinds))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	s.resolveLocked(tapped)
	r.mu.Unlock()
	s.remove = remove
	return s, nil
}

// Changes implements runtime.ChangeTap. Until TapChanges returned (not
// resolved) every change is held: liveLocked drops those of kinds not
// tapped. A kind being handed over (Attach, rule RC10) holds them in its
// handover.
func (s *tapSink) Changes(kind resource.KindKey, events []state.Event) {
	if s.live.Load() { // kinds is set for good
		if !s.kinds[kind] || s.buf.put(events, time.Now().UnixNano()) {
			return
		}
	}
	s.changesLocked(kind, events)
}

// ChangesKept implements runtime.KeepingChangeTap: Changes, keeping the
// batch's slice in the buffer while the tap is live (and the batch fits),
// copying it otherwise.
func (s *tapSink) ChangesKept(kind resource.KindKey, events []state.Event) (spare []state.Event, kept bool) {
	if s.live.Load() {
		if !s.kinds[kind] {
			return nil, false
		}
		if spare, kept = s.buf.keep(events, time.Now().UnixNano()); kept {
			return spare, true
		}
	}
	s.changesLocked(kind, events)
	return nil, false
}

// changesLocked is Changes under the recorder's lock: before the tap is
// live, or for a batch that does not fit the buffer.
func (s *tapSink) changesLocked(kind resource.KindKey, events []state.Event) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.resolved && !s.kinds[kind] {
		return
	}
	if h := s.handovers[kind]; h != nil {
		switch {
		case h.own:
		case !h.done:
			h.held = append(h.held, events...)
		default:
			s.buf.flushLocked(s.r) // live, the buffer is full: its changes came first
			s.tappedLocked(h, events, s.start)
		}
		return
	}
	if s.start == nil {
		s.pending = append(s.pending, events...)
		return
	}
	s.buf.flushLocked(s.r) // the buffer is full: its changes came first
	s.r.handleLocked(events)
}

// Lost implements runtime.ChangeTap.
func (s *tapSink) Lost(kind resource.KindKey) {
	s.r.mu.Lock()
	tapped := !s.resolved || s.kinds[kind]
	s.r.mu.Unlock()
	if !tapped {
		return
	}
	s.lostOnce.Do(func() {
		s.lostKind = kind.String()
		close(s.lost)
	})
}

// Stopped implements runtime.StoppingChangeTap.
func (s *tapSink) Stopped(kind resource.KindKey) {
	s.r.mu.Lock()
	tapped := !s.resolved || s.kinds[kind]
	s.r.mu.Unlock()
	if tapped {
		s.stoppedOnce.Do(func() { close(s.stopped) })
	}
}

// endedLocked reports whether the Runtime stopped and one of kinds is a
// kind it tapped: their changes not handed yet never come. r.mu is held.
func (s *tapSink) endedLocked(kinds []resource.KindKey) bool {
	select {
	case <-s.stopped:
	default:
		return false
	}
	for _, k := range kinds {
		if s.kinds[k] {
			return true
		}
	}
	return false
}

// liveLocked hands the pending changes to the window and the next ones as
// they come; r.mu is held.
func (s *tapSink) liveLocked(start *startState) {
	s.start = start
	pending := s.pending[:0]
	for _, ev := range s.pending {
		if ev.Resource != nil && s.kinds[resource.KindOf(ev.Resource.Metadata())] {
			pending = append(pending, ev)
		}
	}
	s.r.handleLocked(pending)
	s.pending = nil
	s.goLiveLocked()
}

// goLiveLocked makes the tap live (its changes go through buf) once the
// session listed and, for a tap set before the Runtime ran, each kind is
// handed over and the tap brought a change newer than any its own watch
// brought (passed): from then on no tapped change of a kind is one the
// window holds already, and none is held. r.mu is held.
func (s *tapSink) goLiveLocked() {
	if s.buf == nil || s.start == nil {
		return
	}
	for _, h := range s.handovers {
		if !h.passed {
			return
		}
	}
	s.live.Store(true)
}

var _ runtime.KeepingChangeTap = (*tapSink)(nil)
