package runtime

import (
	"errors"

	"github.com/resgraph/resgraph/pkg/runtime/internal/testhook"
)

// schedule attaches a simulator's scheduler (see testhook.Scheduler):
// before anything is registered and before Run, so that every part of the
// Runtime is built with it.
func (r *Runtime) schedule(s testhook.Scheduler) error {
	if s == nil {
		return errors.New("runtime: nil scheduler")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.sched != nil:
		return errors.New("runtime: a scheduler is attached already")
	case r.phase != phaseIdle || len(r.runners) > 0:
		return errors.New("runtime: a scheduler is attached before any controller is registered and before Run")
	}
	r.sched = s
	r.router.SetScheduler(s)
	return nil
}

// scheduler returns the attached scheduler (nil but in a simulator).
func (r *Runtime) scheduler() testhook.Scheduler {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sched
}
