package qtransform

import (
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// processed remembers, per input, the input as it was when it was last
// fully processed, so that a Reconcile of an input that has not changed
// since, and that no mapped input woke up, returns at once. The typical
// case is the controller's own write: adding its finalizer to an input
// changes the input, and the engine queues it again.
//
// An input is identified by its creation time and version (versions start
// over when an input is created again). Every MapInput result bumps the
// input's generation (wake-ups from extra mapped inputs and destroy-ready
// outputs must run); a Reconcile records its work as done only if the
// generation did not move while it ran. It is safe for concurrent use.
type processed struct {
	mu sync.Mutex
	m  map[resource.ID]mark
}

// mark is what processed remembers of one input.
type mark struct {
	created int64
	version resource.Version
	// gen counts the MapInput wake-ups of the input.
	gen uint64
	// done: the input was fully processed at created and version.
	done bool
}

func newProcessed() *processed { return &processed{m: map[resource.ID]mark{}} }

// start returns the input's generation, to pass to finish, and whether the
// input, at created and version, was fully processed since its last
// wake-up by MapInput (so that there is nothing to do).
func (p *processed) start(id resource.ID, created int64, version resource.Version) (gen uint64, skip bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.m[id]
	return m.gen, m.done && m.created == created && m.version.Equal(version)
}

// finish records that the input, at created and version, was fully
// processed by a Reconcile that started at generation gen; nothing is
// recorded when a MapInput woke the input up since.
func (p *processed) finish(id resource.ID, created int64, version resource.Version, gen uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.m[id]; m.gen == gen {
		p.m[id] = mark{created: created, version: version, gen: gen, done: true}
	}
}

// wake records a MapInput wake-up of the input: its next Reconcile runs.
func (p *processed) wake(id resource.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.m[id]
	p.m[id] = mark{gen: m.gen + 1}
}

// forget drops what is known of an input that is gone. (Only a Reconcile
// of the input calls it, and no other Reconcile of the input runs then: a
// wake-up dropped with it leaves the next Reconcile to run in full.)
func (p *processed) forget(id resource.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, id)
}
