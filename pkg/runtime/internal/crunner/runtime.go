package crunner

import (
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
)

// runtime is the [controller.Runtime] of one Controller: its adapter (the
// reads, writes and output tracking) plus its events and its backoff.
type runtime struct {
	*adapter.Adapter
	runner *Runner
}

var (
	_ controller.Runtime       = (*runtime)(nil)
	_ controller.ErrorReporter = (*runtime)(nil)
	_ changelog.Source         = (*runtime)(nil)
	_ changelog.Sizer          = (*runtime)(nil)
)

// EventCh delivers the controller's ReconcileEvents (rule C2). A call ends
// the current pass: a recovery when no failure was reported in it. The
// shared snapshots handed to the controller are checked first: a change
// fails the pass and is raised here (see checkSnapshots). The reads of
// the next pass are counted from here (adapter.PassStarted).
func (r *runtime) EventCh() <-chan controller.ReconcileEvent {
	c := r.runner
	r.checkSnapshots()
	c.cfg.Adapter.PassStarted()
	ended, clean := c.passes.eventCh()
	if ended {
		c.cfg.Telemetry.PassEnded(!clean)
	}
	c.cfg.Idle.Ping()
	if clean {
		c.status.Recover(nil)
	}
	return c.eventCh
}

// QueueReconcile queues a ReconcileEvent, coalescing with pending ones.
func (r *runtime) QueueReconcile() { r.runner.WakeUp() }

// ResetRestartBackoff resets the restart backoff (rule C6). The controller
// says it is healthy: a recovery, unless it reported a failure in this
// pass.
func (r *runtime) ResetRestartBackoff() {
	c := r.runner
	c.resetBackoff()
	if !c.passes.failedInPass() {
		c.status.Recover(nil)
	}
}

// UpdateInputs replaces the dynamic inputs (rule C7). The next pass
// reads every input: the resources of a new input kind are no changes.
func (r *runtime) UpdateInputs(inputs []controller.Input) error {
	err := r.runner.cfg.UpdateInputs(inputs)
	if l := r.runner.cfg.Changes; l != nil {
		l.MarkFull()
	}
	return err
}

// TakeChanges returns the changes routed to the controller since the
// previous call (changelog.Source); a full batch when the Runtime keeps
// no change log for it.
func (r *runtime) TakeChanges(reuse *changelog.Batch) *changelog.Batch {
	if l := r.runner.cfg.Changes; l != nil {
		b := l.Take(reuse)
		if !b.Full && r.runner.cfg.Adapter != nil {
			r.runner.cfg.Adapter.BatchTaken() // a flight recorder's BatchLog notes it
		}
		return b
	}
	return &changelog.Batch{Full: true}
}

// SizeChanges makes the controller's change log hold up to n IDs (never
// fewer than its default limit) before it overflows into a full batch
// (changelog.Sizer); nothing when the Runtime keeps no log for it.
func (r *runtime) SizeChanges(n int) {
	if l := r.runner.cfg.Changes; l != nil {
		l.SetLimit(n)
	}
}

// ReportError records err, a failure the controller handles by itself, as
// the controller's last error (controller.ErrorReporter), and no recovery
// at the end of this pass. The error's text is rendered here, outside any
// Runtime lock, by usercode.ErrorText (a typed-nil error or a panicking
// Error method is described as such).
func (r *runtime) ReportError(err error) {
	if err == nil {
		return
	}
	c := r.runner
	c.passes.fail()
	c.status.Failed(usercode.ErrorText(err))
}
