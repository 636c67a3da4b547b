package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// World is one run's environment, given to Scenario.Setup: the run's seed
// and generator for the fakes' own randomness, a context for their
// goroutines, and relays that put the fakes' notifications under the
// schedule.
type World struct {
	r *run
}

// Seed returns the run's seed.
func (w *World) Seed() uint64 {
	w.r.seedUsed = true
	return w.r.p.seed
}

// Rand returns a generator seeded by the run's seed, for the world's own
// choices (it is not the schedule's: drawing from it changes no schedule).
func (w *World) Rand() *rand.Rand {
	w.r.seedUsed = true
	return rand.New(rand.NewPCG(w.r.p.seed, 0x3011d))
}

// Initial returns the state the run starts from (the scenario's
// Initial, or its Recording's starting state), sorted by kind and ID, for
// Setup to build its fakes in the condition it describes (a fake kernel
// with the links the state lists). Its resources are read-only.
func (w *World) Initial() []resource.Resource {
	if rec := w.r.sc.Recording; rec != nil {
		return rec.Initial
	}
	out := slices.Clone(w.r.sc.Initial)
	slices.SortFunc(out, func(a, b resource.Resource) int { return comparePointers(a.Metadata(), b.Metadata()) })
	return out
}

// Context returns a context canceled when the run ends: goroutines of the
// world must return when it is done (a goroutine left behind is a leak,
// reported as a failure).
func (w *World) Context() context.Context { return w.r.ctx }

// Relay puts a notification channel of the world under the schedule: a
// controller that waits on a channel the world signals (as a kernel's
// change notifications wake a daemon's observer) must wait on the
// returned channel instead, so that it runs when the schedule says, not
// at once in parallel with whatever signalled. Signals on src coalesce
// while one is pending (src and the returned channel are coalescing
// notifications, as a channel of capacity one written with non-blocking
// sends is). The relay's goroutine returns when the run ends.
func (w *World) Relay(name string, src <-chan struct{}) <-chan struct{} {
	rl := &relay{name: name, out: make(chan struct{}, 1)}
	r := w.r
	r.mu.Lock()
	r.relays = append(r.relays, rl)
	r.mu.Unlock()
	go func() {
		for {
			select {
			case <-src:
				rl.mu.Lock()
				rl.pending = true
				rl.mu.Unlock()
				r.ping()
			case <-r.ctx.Done():
				return
			}
		}
	}()
	return rl.out
}

// relay is a notification held for the schedule.
type relay struct {
	name string
	out  chan struct{}

	mu      sync.Mutex
	pending bool
}

func (rl *relay) take() bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	p := rl.pending
	rl.pending = false
	return p
}

func (rl *relay) isPending() bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.pending
}

// signal passes the notification on.
func (rl *relay) signal() {
	if rl.take() {
		select {
		case rl.out <- struct{}{}:
		default:
		}
	}
}
