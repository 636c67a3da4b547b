package boltdb

import (
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// State is a persistent in-memory state: an [inmem] state whose writes
// are made durable in a bbolt file (see the package documentation). It
// implements [state.State]; [State.Close] ends it.
type State struct {
	state.State

	path      string
	store     *store
	lock      *fileLock // the file's lock, released by Close
	closeOnce sync.Once
	closeErr  error
}

func newState(db *bbolt.DB, reg *codec.Registry, c *contents, o options) *State {
	s := newStore(db, reg, c, o)
	st := &State{path: db.Path(), store: s}
	st.State = inmem.NewState(append(o.stateOpts, inmem.WithPersistence(s))...)
	go s.run()
	if c.rotating {
		s.resume()
	}
	return st
}

// Close stops accepting writes (they fail with [ErrClosed] from then on),
// commits the writes already accepted, stops the committing goroutine
// and closes the file, then lets go of the file's lock (another Open may
// then use it). It returns once all of that is done, with the
// first commit error the state met (a [*CommitError]) or the error of
// closing the file. Reads and watches go on serving the state from
// memory. Calling Close again returns the same error. Close does not end
// the watches: their contexts do.
func (st *State) Close() error {
	st.closeOnce.Do(func() {
		st.closeErr = st.store.close()
		if err := st.lock.release(); st.closeErr == nil {
			st.closeErr = err
		}
	})
	return st.closeErr
}

// ValidateType implements [state.TypeValidator]: it returns nil for a
// kind whose type the codec registry given to [Open] knows, and an error
// of the invalid class naming the type and how to register it otherwise
// (such a write would be refused).
func (st *State) ValidateType(kind resource.Kind) error {
	return state.ValidateType(st.State, kind)
}

// Path returns the file's path.
func (st *State) Path() string { return st.path }

// Stats are counters of the commits of a [State].
type Stats struct {
	// Commits is the number of bbolt transactions committed; bbolt makes
	// each durable with two fdatasync calls (the pages, then the meta
	// page).
	Commits uint64
	// Writes is the number of writes (creates, updates, destroys) they
	// committed: Writes/Commits is the group commit's batch size.
	Writes uint64
	// CommitTime is the time spent committing.
	CommitTime time.Duration
	// Rotated is the number of records key rotations rewrote
	// ([State.Rotate]).
	Rotated uint64
}

// Stats returns the counters of the state's commits so far.
func (st *State) Stats() Stats {
	return Stats{
		Commits:    st.store.commits.Load(),
		Writes:     st.store.writes.Load(),
		CommitTime: time.Duration(st.store.commitTime.Load()),
		Rotated:    st.store.rotatedRecords.Load(),
	}
}
