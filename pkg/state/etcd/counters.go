package etcd

import (
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/state"
)

// Counters count what states did with etcd, for monitoring and tests.
// Give one to [New] with [WithCounters] (several states may share one) and
// read its fields at any time; they only grow.
type Counters struct {
	// Writes counts the writes committed: every Create, Update and
	// Destroy that succeeded, including those a Modify, a Teardown or a
	// finalizer change is made of.
	Writes atomic.Int64
	// Conflicts counts the writes refused with an error of the conflict
	// class (state.IsConflictError): the resource exists already, changed
	// since it was read, has another owner or phase. Each try of a Modify
	// that lost a race to another writer counts once.
	Conflicts atomic.Int64
	// Races counts the transactions etcd refused because the resource's
	// key changed since the state read it, or since the version its watch
	// or write memory holds (another writer won); the state then checks
	// the write again on the newer value, which may still succeed.
	Races atomic.Int64
	// Fenced counts the writes refused because the fence of their
	// context no longer stood (state.IsFencedError): writes of a leader
	// whose term had ended.
	Fenced atomic.Int64
	// Relists counts the lists of a kind that its watch made again after
	// etcd ended the watch (compaction, lost leader, broken connection).
	Relists atomic.Int64
	// HistoryReads counts the reads of a kind's changes from before its
	// watch started, from etcd's history, that tail events and bookmarks
	// needed (rule S11).
	HistoryReads atomic.Int64
	// HistoryRevisions counts the revisions those reads asked etcd for,
	// from the first revision each read to those the watch read already:
	// bounded by what the watches needed — their bookmarks, or about
	// twice the revisions their tails span — and by the kind's first
	// write, never by the cluster's whole history. (etcd scans, besides,
	// the revisions from the watch's start to its newest.)
	HistoryRevisions atomic.Int64
}

// WithCounters makes the state count its work in c (nil: no counting).
func WithCounters(c *Counters) Option {
	return func(o *options) { o.counters = c }
}

// counted counts the outcome of a write and returns err.
func (c *core) counted(err error) error {
	switch {
	case err == nil:
		c.counters.Writes.Add(1)
	case state.IsConflictError(err):
		c.counters.Conflicts.Add(1)
	case state.IsFencedError(err):
		c.counters.Fenced.Add(1)
	}
	return err
}
