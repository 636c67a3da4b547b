package qrunner

import "github.com/resgraph/resgraph/pkg/internal/usercode"

// checkSnapshots is called when an item is done, in its worker, outside
// the recovery of the item's user code: the changes of the shared
// snapshots handed to the controller (see adapter.Snapshots) are recorded
// as its last error and raised here (the state's report panics by default
// in test binaries, so the test sees it in the controller's worker).
func (c *Runner) checkSnapshots() {
	snaps := c.cfg.Adapter.Snapshots()
	for _, err := range snaps.Check() {
		c.status.Failed(usercode.ErrorText(err))
		snaps.Raise(err)
	}
}
