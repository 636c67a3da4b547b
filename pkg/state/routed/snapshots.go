package routed

import (
	"errors"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

var _ state.SnapshotTracker = (*State)(nil)

// A snapshot is its backend's (each resource lives in the backend of its
// namespace): the routed state tells each backend of the snapshots it
// handed out, and asks each to check its own. The holder a backend knows
// is a holder value naming the backend, so that a change the backend
// gives the holder (SnapshotChanged), or that CheckHanded returns, comes
// back to ReportChange marked with its backend, which raises it.

// holder is a snapshot holder as backend b knows it. It is a comparable
// value: two of the same holder and backend are one holder to the
// backend.
type holder struct {
	h state.SnapshotHolder
	b int
}

func (w holder) HolderName() string { return w.h.HolderName() }

func (w holder) SnapshotChanged(err error) bool {
	return w.h.SnapshotChanged(&changeOf{err: err, b: w.b})
}

// changeOf is a change that backend b found: ReportChange gives err back
// to b.
type changeOf struct {
	err error
	b   int
}

func (c *changeOf) Error() string { return c.err.Error() }
func (c *changeOf) Unwrap() error { return c.err }

// tracker returns the snapshot tracker of backend i, nil when it tracks
// nothing.
func (s *State) tracker(i int) state.SnapshotTracker {
	t, ok := s.backends[i].(state.SnapshotTracker)
	if !ok || !t.TracksSnapshots() {
		return nil
	}
	return t
}

// TracksSnapshots implements [state.SnapshotTracker]: whether some backend
// watches its snapshots.
func (s *State) TracksSnapshots() bool {
	for i := range s.backends {
		if s.tracker(i) != nil {
			return true
		}
	}
	return false
}

// HandedTo implements [state.SnapshotTracker]: each resource is told to
// the backend of its namespace.
func (s *State) HandedTo(h state.SnapshotHolder, rs ...resource.Resource) {
	s.byBackend(rs, func(i int, rs []resource.Resource) {
		if t := s.tracker(i); t != nil {
			t.HandedTo(holder{h: h, b: i}, rs...)
		}
	})
}

// CheckHanded implements [state.SnapshotTracker]: each backend checks its
// own snapshots; the changes found are marked with their backend for
// ReportChange.
func (s *State) CheckHanded(h state.SnapshotHolder, rs ...resource.Resource) []error {
	var errs []error
	s.byBackend(rs, func(i int, rs []resource.Resource) {
		if t := s.tracker(i); t != nil {
			for _, err := range t.CheckHanded(holder{h: h, b: i}, rs...) {
				errs = append(errs, &changeOf{err: err, b: i})
			}
		}
	})
	return errs
}

// ReportChange implements [state.SnapshotTracker]: a change is raised by
// the backend that found it (that of the first tracking backend when err
// does not say).
func (s *State) ReportChange(err error) {
	var c *changeOf
	if errors.As(err, &c) {
		if t := s.tracker(c.b); t != nil {
			t.ReportChange(c.err)
			return
		}
	}
	for i := range s.backends {
		if t := s.tracker(i); t != nil {
			t.ReportChange(err)
			return
		}
	}
}

// byBackend calls fn with each run of consecutive resources of one
// backend; resources of no backend (nil, or of a namespace nothing
// covers) are skipped: no backend handed them out.
func (s *State) byBackend(rs []resource.Resource, fn func(i int, rs []resource.Resource)) {
	start, cur := 0, -1
	for j, r := range rs {
		i := s.backendOf(r)
		if i != cur {
			if cur >= 0 {
				fn(cur, rs[start:j])
			}
			start, cur = j, i
		}
	}
	if cur >= 0 {
		fn(cur, rs[start:])
	}
}

// backendOf returns the index of the backend of r's namespace, -1 for
// none.
func (s *State) backendOf(r resource.Resource) int {
	if r == nil {
		return -1
	}
	md := r.Metadata()
	if md == nil {
		return -1
	}
	i, ok := s.index(md.Namespace())
	if !ok {
		return -1
	}
	return i
}
