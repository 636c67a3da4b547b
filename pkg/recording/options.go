package recording

import (
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Defaults of the options.
const (
	// DefaultMaxAge is the time a recorder's window covers by default.
	DefaultMaxAge = 10 * time.Minute
	// DefaultMaxBytes is the most a recorder's window holds by default
	// (estimated encoded bytes of its changes).
	DefaultMaxBytes = 32 << 20
	// DefaultKeepLimit is how many kept recordings a recorder holds.
	DefaultKeepLimit = 4
	// DefaultFailureThreshold is the number of failures of one controller
	// (failing items, or crashes since the last kept recording) that keeps
	// a recording.
	DefaultFailureThreshold = 5
)

// Runtime is what a recorder asks of the Runtime it records
// (*runtime.Runtime implements it): its dependency graph, for the kinds
// to watch and the controllers' names, and its observer, for hot loops
// and failures.
type Runtime interface {
	GetDependencyGraph() (*controller.DependencyGraph, error)
	Observe() observe.Observer
}

// Option configures [New].
type Option func(*config)

type config struct {
	kinds       []resource.Kind
	controllers []string
	rt          Runtime
	maxAge      time.Duration
	maxBytes    int64
	sensitive   map[resource.Type]bool
	source      string
	replay      string
	logger      *zap.Logger
	keepDir     string
	keepLimit   int
	failures    int
	poll        time.Duration
	ownWatches  bool
	// takeWait bounds a lean window's take (DefaultTakeWait).
	takeWait time.Duration
}

func defaultConfig() config {
	return config{
		maxAge: DefaultMaxAge, maxBytes: DefaultMaxBytes, sensitive: map[resource.Type]bool{},
		logger: zap.NewNop(), keepLimit: DefaultKeepLimit, failures: DefaultFailureThreshold, poll: time.Second,
		takeWait: DefaultTakeWait,
	}
}

// WithRuntime records rt: every kind of its dependency graph (each input
// kind, and each output type in its declared namespace or, when it
// declares none, in every namespace of the graph), its controllers' names
// (rule RC2), and it keeps a recording when rt flags a hot loop or a
// controller's failures reach the threshold (rule RC7). The graph is read
// when Run starts and every second after: a kind added starts the window
// over.
func WithRuntime(rt Runtime) Option { return func(c *config) { c.rt = rt } }

// WithOwnWatches makes the recorder watch every kind itself, even those
// the Runtime of WithRuntime watches and lets it tap (rule RC8): the
// state then sends those changes twice, once to the Runtime and once to
// the recorder (what a recorder costs without the tap). Nor does it tap
// the state's commits (rule RC11).
func WithOwnWatches() Option { return func(c *config) { c.ownWatches = true } }

// WithKinds adds kinds to record (beside those of WithRuntime).
func WithKinds(kinds ...resource.Kind) Option {
	return func(c *config) { c.kinds = append(c.kinds, kinds...) }
}

// WithControllers adds owners whose writes are controllers' writes
// (beside the controllers of WithRuntime).
func WithControllers(names ...string) Option {
	return func(c *config) { c.controllers = append(c.controllers, names...) }
}

// WithWindow bounds the window: at most maxAge of history and maxBytes of
// changes (estimated encoded size); the older part is folded into the
// starting state (rule RC3). Zero keeps a default.
func WithWindow(maxAge time.Duration, maxBytes int64) Option {
	return func(c *config) {
		if maxAge > 0 {
			c.maxAge = maxAge
		}
		if maxBytes > 0 {
			c.maxBytes = maxBytes
		}
	}
}

// WithTakeWait bounds how long a take waits for the changes up to its
// cut of a lagging kind (rule RC3: a recorder of controllers over a
// state that numbers its changes lists every kind at the take and waits
// for each kind's changes up to the listing); past it the take fails
// with a [*CatchUpError]. Zero keeps DefaultTakeWait.
func WithTakeWait(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.takeWait = d
		}
	}
}

// WithSensitive marks types as sensitive, beside those whose definition
// in the codec registry says so (codec.Registry.Definitions): a
// recording keeps their resources as the codec's bytes only and never
// prints their specs (rule RC5).
func WithSensitive(types ...resource.Type) Option {
	return func(c *config) {
		for _, t := range types {
			c.sensitive[t] = true
		}
	}
}

// WithSource names the daemon in its recordings.
func WithSource(name string) Option { return func(c *config) { c.source = name } }

// WithReplayCommand is the command that replays the daemon's recordings,
// written in each (Recording.Replay): FILE stands for the recording's
// file.
func WithReplayCommand(cmd string) Option { return func(c *config) { c.replay = cmd } }

// WithLogger logs the recorder's restarts and kept recordings.
func WithLogger(l *zap.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithKeep writes every kept recording into dir as well (a file named
// after its time and reason), and holds the last limit of them in memory
// (0 keeps DefaultKeepLimit).
func WithKeep(dir string, limit int) Option {
	return func(c *config) {
		c.keepDir = dir
		if limit > 0 {
			c.keepLimit = limit
		}
	}
}

// WithFailureThreshold sets the failures of one controller that keep a
// recording (rule RC7): its failing items, or its crashes since the last
// recording kept for it. 0 turns that off.
func WithFailureThreshold(n int) Option { return func(c *config) { c.failures = max(n, 0) } }
