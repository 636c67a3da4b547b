package runtime

import (
	"cmp"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/observe"
)

// health computes the Runtime's health now (see observe.Health): from
// its run phase, every controller's readiness and liveness, and every
// kind watch's progress. It asks the state nothing.
func (r *Runtime) health() observe.Health {
	now := time.Now()
	bound := r.opts.healthBound
	h := observe.Health{Time: now}
	r.mu.Lock()
	phase := r.phase
	named := make([]namedRunner, 0, len(r.runners))
	for name, rn := range r.runners {
		named = append(named, namedRunner{name, rn})
	}
	r.mu.Unlock()
	switch phase {
	case phaseIdle:
		not := observe.HealthCheck{Reason: "not running: Run has not started"}
		h.NotReady, h.NotLive = append(h.NotReady, not), append(h.NotLive, not)
	case phaseStopped:
		not := observe.HealthCheck{Reason: "not running: Run returned or is stopping"}
		h.NotReady, h.NotLive = append(h.NotReady, not), append(h.NotLive, not)
	}
	slices.SortFunc(named, func(a, b namedRunner) int { return cmp.Compare(a.name, b.name) })
	for _, n := range named {
		notReady, notLive := n.rn.health(now, bound)
		if notReady != "" && phase == phaseRunning {
			h.NotReady = append(h.NotReady, observe.HealthCheck{Controller: n.name, Reason: notReady})
		}
		if notLive != "" {
			h.NotLive = append(h.NotLive, observe.HealthCheck{Controller: n.name, Reason: notLive})
		}
	}
	if phase == phaseRunning {
		for _, k := range r.router.Health(now, bound) {
			h.NotLive = append(h.NotLive, observe.HealthCheck{Kind: k.Key.String(), Reason: k.Reason})
		}
	}
	h.Ready, h.Live = len(h.NotReady) == 0, len(h.NotLive) == 0
	return h
}

// namedRunner is a registered controller and its name.
type namedRunner struct {
	name string
	rn   runner
}
