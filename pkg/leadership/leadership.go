// Package leadership is the contract between the Runtime and a backend
// that elects leaders among the replicas of a Runtime sharing a state
// (rule E4): runtime.WithLeadership makes a Runtime campaign, per Runtime
// or per controller, through an [Elector], run a controller only while it
// holds a [Term] of its election, and fence every write the controller
// makes with the term's [state.Fence]. The etcd state's module implements
// an Elector on etcd leases and elections.
//
// A controller reads the term it runs under from its context with
// [FromContext] (the election, the term's number, since when this replica
// leads); the Runtime's tests of it are TestE4_ControllerReadsItsTermFromItsContext
// and TestE4_NoTermWithoutLeadership (package runtime), and the etcd
// state's example runs one under a real election.
package leadership

import (
	"context"
	"errors"
	"time"

	"github.com/resgraph/resgraph/pkg/state"
)

// Elector runs elections among replicas. Its methods are safe for
// concurrent use; a Runtime campaigns in one election per controller (or
// one for the whole Runtime) at a time.
type Elector interface {
	// Campaign blocks until this replica leads the election named
	// election, and returns its term; or until ctx is done, and returns
	// ctx's error. A replica campaigns in an election once at a time: a
	// second Campaign of the same election before the first returned and
	// its term ended is an invalid-class error. Other errors are
	// transient (etcd unreachable): the caller campaigns again after a
	// backoff.
	Campaign(ctx context.Context, election string) (Term, error)
	// CheckState reports, without I/O, whether st fences the writes made
	// under this elector's terms ([state.Fencer]): nil if it does, else
	// an invalid-class error saying why not.
	CheckState(st state.State) error
}

// Term is one leadership of an election by this replica: from the
// moment Campaign returned it until it ends. Its methods are safe for
// concurrent use.
type Term interface {
	// Election is the election's name.
	Election() string
	// Number identifies the term: the terms of an election have
	// increasing numbers, in the order they began.
	Number() uint64
	// Since is when this replica became the leader.
	Since() time.Time
	// Fence is the term's fence: a write whose context carries it (see
	// [state.WithFence]) commits only while the term stands.
	Fence() state.Fence
	// Done is closed when the term ends or is asked to end: it was lost
	// (the lease expired, the session or its key are gone: the fence
	// already fails), or the elector asks this replica to hand it over
	// (Err is then [ErrHandover]: the fence stands until Resign). The
	// leader stops what it runs under the term, then calls Resign.
	Done() <-chan struct{}
	// Err tells why Done was closed (nil while it is not).
	Err() error
	// Resign ends the term, so that the next candidate leads at once;
	// for a term already lost it only lets go of it. Idempotent.
	Resign(ctx context.Context) error
}

// ErrHandover is [Term.Err] for a term the elector asks its leader to
// hand over to another replica (to spread the elections over the
// replicas).
var ErrHandover = errors.New("leadership: handed over to another replica")

// ErrLost is wrapped by [Term.Err] for a term that ended without being
// handed over: its lease expired, its session or its key are gone.
var ErrLost = errors.New("leadership: lost")
