package qrunner

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// Close shuts the queue down once the controller runs no more (see
// [Runner.Serve]).
func (c *Runner) Close() { c.queue.ShutDown() }

// InputKinds returns the kinds of the controller's inputs, each once:
// what a new leadership term lists into the queue, so that the controller
// starts from the current state, as after a restart (rule Q1).
func (c *Runner) InputKinds() []resource.KindKey {
	seen := map[resource.KindKey]struct{}{}
	var out []resource.KindKey
	for _, in := range c.cfg.Settings.Inputs {
		k := resource.KindOf(resource.NewKind(in.Namespace, in.Type))
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			out = append(out, k)
		}
	}
	return out
}
