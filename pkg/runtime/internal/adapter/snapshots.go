package adapter

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Snapshots is the controller as a holder of the state's shared
// snapshots (rule S7), over a state that watches them for changes
// ([state.SnapshotTracker]: the inmem state's mutation detector). Every
// snapshot the adapter hands the controller (a read-only Get or List,
// served by the cache or the state) is told to the state, which then
// names the controller when it finds the snapshot changed, and is checked
// when the controller is done with it: at the end of its pass or item
// ([Snapshots.Check], called by the runner in the controller's
// goroutine). A change the state finds on its own (when the resource is
// next written) is given to the controller too, for its runner to raise
// at the same point. A nil *Snapshots (a state that watches nothing)
// does nothing.
type Snapshots struct {
	tracker state.SnapshotTracker
	name    string
	stopped atomic.Bool

	mu sync.Mutex
	// handed are the snapshots handed since the last check; given are
	// the changes the state gave since then. Guarded by mu.
	handed []resource.Resource
	given  []error
}

var _ state.SnapshotHolder = (*Snapshots)(nil)

// newSnapshots returns the holder of the controller name over st, or nil
// when st watches no snapshot.
func newSnapshots(st state.State, name string) *Snapshots {
	t, ok := st.(state.SnapshotTracker)
	if !ok || !t.TracksSnapshots() {
		return nil
	}
	return &Snapshots{tracker: t, name: name}
}

// HolderName implements [state.SnapshotHolder]: the controller's name.
func (s *Snapshots) HolderName() string { return s.name }

// SnapshotChanged implements [state.SnapshotHolder]: the change is kept
// for the runner to raise at the end of the controller's pass or item;
// once the controller stopped, the state raises it.
func (s *Snapshots) SnapshotChanged(err error) bool {
	if s.stopped.Load() {
		return false
	}
	s.mu.Lock()
	s.given = append(s.given, err)
	s.mu.Unlock()
	return true
}

// Hand records that rs, snapshots of the state, were handed to the
// controller other than through the adapter (a destroyed input's last
// version given to MapInput). Nil resources are skipped.
func (s *Snapshots) Hand(rs ...resource.Resource) {
	if s == nil {
		return
	}
	if slices.Contains(rs, nil) {
		rs = slices.DeleteFunc(slices.Clone(rs), func(r resource.Resource) bool { return r == nil })
	}
	if len(rs) == 0 {
		return
	}
	s.tracker.HandedTo(s, rs...)
	s.mu.Lock()
	s.handed = append(s.handed, rs...)
	s.mu.Unlock()
}

// Check compares the snapshots handed to the controller since the last
// check with what the state stored, and returns the changes to raise:
// those found now and those the state gave since the last check. The
// runner calls it in the controller's goroutine when a pass or an item
// ends, records each change as the controller's failure and raises it
// ([Snapshots.Raise]).
func (s *Snapshots) Check() []error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	handed, given := s.handed, s.given
	s.handed, s.given = nil, nil
	s.mu.Unlock()
	if len(handed) > 0 {
		given = append(given, s.tracker.CheckHanded(s, handed...)...)
	}
	return given
}

// Raise raises err, a change Check returned, as the state raises the
// changes it finds (the inmem detector's report: it panics by default in
// test binaries).
func (s *Snapshots) Raise(err error) {
	if s != nil {
		s.tracker.ReportChange(err)
	}
}

// Start tells that the controller runs (again): it takes on the changes
// the state finds.
func (s *Snapshots) Start() {
	if s != nil {
		s.stopped.Store(false)
	}
}

// Stop tells that the controller stopped: the changes the state finds
// from now on are raised by the state.
func (s *Snapshots) Stop() {
	if s != nil {
		s.stopped.Store(true)
	}
}

// handGet records the result of a Get: the snapshot, when read-only.
func (s *Snapshots) handGet(r resource.Resource, opts []state.GetOption) {
	if s == nil || r == nil {
		return
	}
	var o state.GetOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.ReadOnly {
		s.Hand(r)
	}
}

// handList records the result of a List: the snapshots, when read-only.
func (s *Snapshots) handList(l resource.List, opts []state.ListOption) {
	if s == nil || len(l.Items) == 0 {
		return
	}
	var o state.ListOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.ReadOnly {
		s.Hand(l.Items...)
	}
}
