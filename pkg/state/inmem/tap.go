package inmem

import (
	"slices"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TapKind implements kindtap.Tapper: t sees every change of kind committed
// after TapKind returns, called by its writer under the kind's lock, right
// after the change is in the kind's history and before any watcher can
// deliver it. The resources it is handed are the stored snapshots (rule
// S7). A tap costs the kind's writers one call per change and nothing
// else; it holds no record of the history (its lag never moves a watcher
// into the spill).
func (c *core) TapKind(kind resource.Kind, t kindtap.Tap) (func(), error) {
	if kind == nil || t == nil {
		return nil, state.NewInvalidError(nil, "inmem: TapKind needs a kind and a tap")
	}
	ks := c.store(resource.KindOf(kind))
	e := &tapEntry{t}
	ks.mu.Lock()
	ks.setTapsLocked(append(ks.taps, e))
	ks.mu.Unlock()
	return func() {
		ks.mu.Lock()
		defer ks.mu.Unlock()
		if i := slices.Index(ks.taps, e); i >= 0 {
			ks.setTapsLocked(slices.Delete(ks.taps, i, i+1))
		}
	}, nil
}

// setTapsLocked makes taps the kind's taps and sets what a write calls:
// nothing without a tap, the tap itself when there is one (one interface
// call a change), a fan-out to each in order otherwise. ks.mu is held.
func (ks *kindStore) setTapsLocked(taps []*tapEntry) {
	ks.taps = taps
	switch len(taps) {
	case 0:
		ks.tap = nil
	case 1:
		ks.tap = taps[0].Tap
	default:
		ks.tap = tapFanout(slices.Clone(taps))
	}
}

// tapFanout calls each of several taps of a kind, in the order they were
// set.
type tapFanout []*tapEntry

func (f tapFanout) Committed(rev uint64, old, new resource.Resource, at int64) {
	for _, t := range f {
		t.Committed(rev, old, new, at)
	}
}

// tapEntry is a tap set on a kind (one per TapKind: a tap set twice is
// called twice, and a tap need not be comparable).
type tapEntry struct{ kindtap.Tap }
