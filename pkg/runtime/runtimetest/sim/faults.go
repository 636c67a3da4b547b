package sim

// Faults are the faults a simulation injects while the workload runs
// (none once it ended: the Runtime must then converge). Each is off at
// rate 0; a rate is a probability in [0, 1].
type Faults struct {
	// At each write of a controller (Create, Update, Destroy and what is
	// built on them, finalizers included), as the state would answer it:

	// Conflict fails the write with a conflict error (state.IsConflictError);
	// nothing is written. Modify and the finalizer helpers retry it, as
	// they retry any conflict.
	Conflict float64
	// Transient fails the write with an error of no class (a timeout, an
	// unavailable backend); nothing is written.
	Transient float64
	// Crash lets the write commit, then makes the writer panic before the
	// call returns: the Controller's Run (restarted after its backoff) or
	// the QController's item (retried) crashes midway. A write made from a
	// goroutine of the controller's own is not crashed (nothing would
	// recover the panic).
	Crash float64
	// Kill lets the write commit, then kills the whole Runtime before the
	// writer learns the outcome, and starts a new one over the committed
	// state (a daemon that died mid-reconcile and was restarted).
	Kill float64

	// At each step:

	// Restart kills the Runtime between two steps — undelivered changes,
	// queued items and caches are lost — and starts a new one over the
	// committed state (a fresh in-memory state restored from it, new
	// controllers from System.Register; the world stays).
	Restart float64
	// Relist makes the watch of one input kind restart: it lists the kind
	// again and routes what differs (Runtime.Relist).
	Relist float64

	// StaleCache makes every change of a cached kind reach the kind's cache
	// only when the schedule says, so that cached reads are served at the
	// older revisions the Runtime's consistency contract allows (at or
	// after the reader's floor), not the newest.
	StaleCache bool

	// Max bounds the faults of one run (0: 3).
	Max int
}

// AllFaults turns every fault on, at rates that leave a run of a few
// hundred steps a handful of faults.
func AllFaults() Faults {
	return Faults{Conflict: 0.03, Transient: 0.03, Crash: 0.02, Kill: 0.01, Restart: 0.003, Relist: 0.005, StaleCache: true}
}

// faultKind is a fault injected at one point; its value is what a tape
// records (0: none).
type faultKind uint8

const (
	noFault faultKind = iota
	faultConflict
	faultTransient
	faultCrash
	faultKill
	faultRestart
	faultRelist
)

func (k faultKind) String() string {
	switch k {
	case faultConflict:
		return "conflict"
	case faultTransient:
		return "transient error"
	case faultCrash:
		return "crash"
	case faultKill:
		return "kill"
	case faultRestart:
		return "restart"
	case faultRelist:
		return "relist"
	default:
		return "none"
	}
}

// writeFaults and stepFaults are the faults of each decision point, in
// tape order.
var (
	writeFaults = []faultKind{faultConflict, faultTransient, faultCrash, faultKill}
	stepFaults  = []faultKind{faultRestart, faultRelist}
)

func (f Faults) rate(k faultKind) float64 {
	switch k {
	case faultConflict:
		return f.Conflict
	case faultTransient:
		return f.Transient
	case faultCrash:
		return f.Crash
	case faultKill:
		return f.Kill
	case faultRestart:
		return f.Restart
	case faultRelist:
		return f.Relist
	}
	return 0
}

func (f Faults) max() int {
	if f.Max <= 0 {
		return 3
	}
	return f.Max
}

// any reports whether some fault of kinds has a rate.
func (f Faults) any(kinds []faultKind) bool {
	for _, k := range kinds {
		if f.rate(k) > 0 {
			return true
		}
	}
	return false
}
