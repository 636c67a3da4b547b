package crunner

import "sync/atomic"

// raised is the change of a shared snapshot (rule S7) that a Runner is
// raising in the controller's goroutine: when the state's report panics
// with it (its default in test binaries), the panic unwinds the
// controller's Run and is not a crash of the controller to recover from
// but the test's failure, so the Runner's recovery panics again with it.
type raised struct{ p atomic.Pointer[error] }

// set records err as the change being raised.
func (r *raised) set(err error) { r.p.Store(&err) }

// is reports whether v, a recovered panic value, is the change being
// raised.
func (r *raised) is(v any) bool {
	p := r.p.Load()
	return p != nil && v == any(*p)
}

// checkSnapshots is called when the controller's pass ends (in its
// goroutine, from EventCh): the changes of the snapshots handed to it
// (see adapter.Snapshots) fail the pass, are recorded as its last error
// and are raised.
func (r *runtime) checkSnapshots() {
	snaps := r.Snapshots()
	for _, err := range snaps.Check() {
		r.ReportError(err)
		r.runner.raising.set(err)
		snaps.Raise(err)
	}
}
