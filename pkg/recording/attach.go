package recording

import (
	"context"
	"errors"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

// ErrNotAttachable is returned by Attach when the recorder has no Runtime
// it can attach to (WithRuntime of a *runtime.Runtime, without
// WithOwnWatches), or when Run was called already.
var ErrNotAttachable = errors.New("recording: Attach needs WithRuntime of a Runtime that lets its watches be tapped (and no WithOwnWatches), before Run")

// listingTapper is a Runtime a recorder can attach to before it runs
// (*runtime.Runtime, rule RC10).
type listingTapper interface {
	AttachChanges(t runtime.ListingTap, kinds []resource.KindKey) ([]resource.KindKey, func(), error)
}

// Attach starts recording now, before the Runtime of WithRuntime runs
// (rule RC10): it watches and lists every kind itself, and taps the
// Runtime's watches, to which it hands each kind over once the Runtime
// listed it. Every change from Attach on is recorded, those made before
// the Runtime runs (a daemon's intent) and the controllers' first passes
// included. Call it before the Runtime's Run (runtime.ErrRunning
// otherwise) and before the recorder's Run, which takes over what Attach
// started (start it right after: the changes are held until then). Its
// watches end with ctx, or when Run's first window ends. Over a state
// that does not number its changes (a listing at revision 0) the
// recorder keeps its own watches and ignores the tap.
func (r *Recorder) Attach(ctx context.Context) error {
	rt, ok := r.cfg.rt.(listingTapper)
	if !ok || r.cfg.ownWatches || r.running.Load() {
		return ErrNotAttachable
	}
	kinds, _, err := r.resolve()
	if err != nil {
		return err
	}
	s := newTapSink(r)
	s.handovers = map[resource.KindKey]*handover{}
	for _, k := range kindKeys(kinds) {
		s.handovers[k] = &handover{}
	}
	tapped, remove, err := rt.AttachChanges(s, kindKeys(kinds))
	if err != nil {
		return err
	}
	r.mu.Lock()
	s.resolveLocked(tapped)
	s.remove = remove
	for k := range s.handovers {
		if !s.kinds[k] {
			delete(s.handovers, k) // never the tap's: read from its commits, or watched, as RC8 says
		}
	}
	r.mu.Unlock()
	src, err := r.openSource(ctx, kinds, s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.attached, r.attachedKinds = src, kinds
	return nil
}

// attachedFor returns what Attach started, when the session records the
// kinds it was started for (it is stopped otherwise), and nil when none.
func (r *Recorder) attachedFor(kinds []Kind) *source {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.attached
	r.attached = nil
	if s != nil && !slices.Equal(r.attachedKinds, kinds) {
		s.close()
		return nil
	}
	return s
}

// handover is a tapped kind's passage from the recorder's own watch
// (started by Attach) to the Runtime's (rule RC10). The own watch brings
// every change from Attach on, the tap every change after the Runtime's
// first listing (rev): the tap's changes are held until the own watch
// brought a change after rev (so it brought every one before), then the
// kind is the tap's (done) and the own watch's changes are dropped.
// Protected by r.mu.
type handover struct {
	listed bool
	rev    uint64
	// handled is the revision of the newest change of the kind added to
	// the window.
	handled uint64
	held    []state.Event
	done    bool
	// passed is set once, handed over, the tap brought a change newer
	// than handled: every later change of the tap's is newer still.
	passed bool
	// own is set when the Runtime listed the kind at revision 0 (the
	// state does not number its changes): the own watch keeps the kind.
	own bool
	// stop ends the own watch of the kind.
	stop context.CancelFunc
}

// finishLocked hands the kind over to the tap; r.mu is held.
func (h *handover) finishLocked() {
	h.done = true
	if h.stop != nil {
		h.stop()
	}
}

// Listed implements runtime.ListingTap.
func (s *tapSink) Listed(kind resource.KindKey, _ []state.Event, rev uint64) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if h := s.handovers[kind]; h != nil {
		h.listed, h.rev, h.own = true, rev, rev == 0
		if !h.own && h.handled > rev {
			h.finishLocked() // the own watch is ahead of the listing
		}
	}
}

// ownLocked adds a batch of the own watch of a tapped kind (h) to the
// window until the kind is handed over to the tap; r.mu is held.
func (s *tapSink) ownLocked(h *handover, evs []state.Event, start *startState) {
	for i := range evs {
		if h.done {
			return
		}
		ev := evs[i : i+1]
		s.r.handleLocked(ev)
		h.handled = max(h.handled, ev[0].Revision)
		if h.listed && !h.own && ev[0].Revision > h.rev {
			h.finishLocked()
			s.tappedLocked(h, h.held, start)
			h.held = nil
		}
	}
}

// tappedLocked adds the tap's changes of a handed-over kind (h) that the
// own watch did not bring; r.mu is held.
func (s *tapSink) tappedLocked(h *handover, evs []state.Event, start *startState) {
	i := 0
	for i < len(evs) && evs[i].Revision <= h.handled {
		i++
	}
	if i < len(evs) {
		s.r.handleLocked(evs[i:])
		h.handled = max(h.handled, evs[len(evs)-1].Revision)
		if h.done && !h.passed {
			h.passed = true
			s.goLiveLocked()
		}
	}
}

// handoverOf returns the handover of the kind of a batch of an own watch
// (nil: none, the kind is not tapped); r.mu is held.
func (s *tapSink) handoverOf(evs []state.Event) *handover {
	if s.handovers == nil {
		return nil
	}
	for _, ev := range evs {
		if ev.Resource != nil {
			k := resource.KindOf(ev.Resource.Metadata())
			if s.kinds[k] {
				return s.handovers[k]
			}
			return nil
		}
	}
	return nil
}

func kindKeys(kinds []Kind) []resource.KindKey {
	keys := make([]resource.KindKey, 0, len(kinds))
	for _, k := range kinds {
		keys = append(keys, resource.KindOf(resource.NewKind(k.Namespace, k.Type)))
	}
	return keys
}
