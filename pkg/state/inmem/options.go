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
}

func defaultOptions() options {
	return options{historyCapacity: DefaultHistoryCapacity}
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
