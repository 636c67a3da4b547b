package main

import (
	"context"

	"github.com/resgraph/resgraph/pkg/observe"
	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
)

// health returns the agent's health checks, served on its API: readiness
// is every controller running (started, its inputs bootstrapped), one
// check per controller; liveness is the Runtime's Run running.
func (d *daemon) health(context.Context) []obsremote.Check {
	var checks []obsremote.Check
	for _, st := range d.engine.Observe().Controllers() {
		c := obsremote.Check{Probe: obsremote.Readiness, Name: "controller " + st.Name, OK: st.Lifecycle == observe.LifecycleRunning}
		switch st.Lifecycle {
		case observe.LifecycleRunning:
			c.Message = "running"
		case observe.LifecycleStarting:
			c.Message = "starting: waiting for its inputs' first listing"
		case observe.LifecycleBackoff:
			c.Message = "restarting after a failure: " + st.LastError
		default:
			c.Message = st.Lifecycle.String()
		}
		checks = append(checks, c)
	}
	live := obsremote.Check{Probe: obsremote.Liveness, Name: "runtime", OK: d.running.Load(), Message: "the Runtime runs"}
	if !live.OK {
		live.Message = "the Runtime is not running"
	}
	return append(checks, live)
}
