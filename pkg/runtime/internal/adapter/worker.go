package adapter

import "context"

// workerKey is the context key of a QController worker's number: a
// pointer, which a context's lookup compares without a call.
var workerKey = new(byte)

// WorkerContext returns the context of worker n (from 1) of a QController
// whose workers are numbered ([Adapter.SetWorkers]): the writes made with it, or
// with a context derived from it, name the worker in their trace records
// (trace.Record.Worker), as the worker's ReconcileStart records do. Made
// once per worker, so that an item's run allocates nothing for it.
func WorkerContext(ctx context.Context, n uint32) context.Context {
	return context.WithValue(ctx, workerKey, n)
}

// SetWorkers says whether the workers that run the controller's items
// are numbered (a QController of several workers, or of one and a
// RunHook): then each write asks its context which worker made it
// (WorkerContext; none: 0, the RunHook's). Called before the controller
// runs.
func (a *Adapter) SetWorkers(numbered bool) { a.workers = numbered }

// workerOf returns the worker whose context ctx is (or derives from), 0
// when the workers are not numbered, or none said.
func (a *Adapter) workerOf(ctx context.Context) uint32 {
	if !a.workers {
		return 0
	}
	n, _ := ctx.Value(workerKey).(uint32)
	return n
}
