package inmem

// DefaultHistoryCapacity is the number of changes a [NewState] keeps per
// kind unless [WithHistoryCapacity] says otherwise. See the package
// documentation for what it bounds and why this value.
const DefaultHistoryCapacity = 4096

// idQueueLimit caps the undelivered changes a single-resource watch keeps
// individually before it coalesces them (see the package documentation).
const idQueueLimit = 256

// Option configures [NewState].
type Option func(*options)

type options struct {
	historyCapacity int
	historyBytes    int64
	// detect turns the mutation detector on, guard the production guard
	// (see guard.go; never both); report is their report (nil: the
	// default of the mode).
	detect, guard bool
	report        func(error)
	// persist is the persistence hook; nil when the state is not
	// persistent.
	persist Persistence
	// guardEvery is how many writes there are per version the guard
	// samples (see guardSample); trackSizes makes every kind track its
	// versions' sizes from its first write (see slot.go). Both are for
	// tests.
	guardEvery uint64
	trackSizes bool
}

func defaultOptions() options {
	detect, guard := checkDefault()
	return options{historyCapacity: DefaultHistoryCapacity, historyBytes: DefaultHistoryBytes, detect: detect, guard: guard, guardEvery: guardSample}
}

// WithMutationDetector turns the mutation detector on (rule S7): every
// stored snapshot, which watch events and read-only Get and List share, is
// kept with a reference copy, and report is called with a
// [*MutationError] naming the resource, the changed part and its values
// when a snapshot no longer matches its copy. A snapshot is checked when
// its resource is next written or destroyed (the replaced version, and
// the one before it while the history keeps the change that replaced
// it), and a last time when the change that replaced it leaves the
// history; a change made after that last check, or to a snapshot of a
// state nobody writes to any more, is not reported. The checks run in the
// writer's goroutine after the write is done, without the kind's lock; a
// change of a snapshot the state was told was handed to a holder (see
// [state.SnapshotTracker]: the Runtime's controllers) names the holders and
// is raised by one of them, in its goroutine. See the package
// documentation for what a check compares and what it costs.
//
// A nil report means the default, which panics with the error. The
// detector is on by default in test binaries (testing.Testing) with the
// default report, and off otherwise; RESGRAPH_MUTATION_DETECTOR=0 or =1
// overrides that default either way (this option turns it on whatever the
// environment says).
func WithMutationDetector(report func(error)) Option {
	return func(o *options) {
		o.detect, o.guard = true, false
		o.report = report
	}
}

// WithMutationReport sets the report of the mutation detector (see
// [WithMutationDetector]) or of the guard ([WithMutationGuard]) without
// turning either on or off: report is called with each [*MutationError]
// instead of the default (the detector's panics; the guard's goes to the
// readers subscribed to its findings, else to the standard logger). A nil
// report means the default. (runtimetest.NewState uses it to fail the test
// that owns the state rather than end the test binary.)
func WithMutationReport(report func(error)) Option {
	return func(o *options) { o.report = report }
}

// WithMutationGuard turns on the production guard of rule S7 instead of
// the detector: the default outside test binaries (unless
// RESGRAPH_MUTATION_DETECTOR=0 turns every check off, or =1 the detector
// on). See the package documentation, "The production guard".
func WithMutationGuard() Option {
	return func(o *options) { o.detect, o.guard = false, true }
}

// withoutMutationDetector turns the detector and the guard off
// (benchmarks of their costs).
func withoutMutationDetector() Option {
	return func(o *options) { o.detect, o.guard = false, false }
}

// withGuardEvery turns the guard on, sampling the first of every n writes
// of a kind (n ≥ 2; tests of the sampled versions' bookkeeping).
func withGuardEvery(n uint64) Option {
	return func(o *options) { o.detect, o.guard, o.guardEvery = false, true, max(n, 2) }
}

// withTrackedSizes makes every kind track its versions' sizes from its
// first write, so that every version is stored boxed (tests of the boxed
// items; see slot.go).
func withTrackedSizes() Option {
	return func(o *options) { o.trackSizes = true }
}

// WithHistoryCapacity sets how many changes the state keeps per kind: the
// reach of tail events and bookmarks (rule S11). A watcher lagging by more
// than the history, or by more than min(n, 1024) changes, may have its
// backlog coalesced (rule S12; see the package documentation). n is
// clamped to [1, MaxHistoryCapacity].
func WithHistoryCapacity(n int) Option {
	return func(o *options) { o.historyCapacity = min(max(n, 1), MaxHistoryCapacity) }
}

// MaxHistoryCapacity is the largest history capacity per kind.
const MaxHistoryCapacity = 1 << 24

// DefaultHistoryBytes is the memory, in bytes, that the replaced versions
// kept by a kind's history may hold unless [WithHistoryBytes] says
// otherwise (see the package documentation).
const DefaultHistoryBytes = 8 << 20

// WithHistoryBytes bounds the memory of each kind's history: the
// estimated bytes of the replaced versions that only the history refers
// to (the versions an Updated or Destroyed event carries as Old). When a
// change would exceed it, the oldest changes leave the history before the
// ring is full, down to the newest one, which is always kept: the reach of
// tail events and bookmarks (rule S11) then shrinks accordingly. Sizes
// are estimated by the resource's ApproxSize method when it has one (typed
// resources do), else counted as 512 bytes. While a kind's largest version
// is small enough that its history cannot reach n (the history capacity
// times that size is at most n), a kind does not keep each version's size,
// and counts a replaced version as that largest size; from the write that
// makes n reachable on, it keeps the size of each version it stores, and
// counts a version stored before as the largest size as of that write. The
// count is so never below the estimates. n is clamped to at least 0.
func WithHistoryBytes(n int64) Option {
	return func(o *options) { o.historyBytes = max(n, 0) }
}
