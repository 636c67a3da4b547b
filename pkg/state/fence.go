package state

import (
	"context"

	"github.com/resgraph/resgraph/pkg/internal/errclass"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Fence is a condition outside the resources that a write must meet when
// it commits: typically a leadership term (see package leadership), so
// that a leader that was deposed — its lease expired while it was paused
// or cut off, or a successor was elected — can never land a write (rule
// E4). A write whose context carries a fence ([WithFence]) is committed by
// a state that checks fences ([Fencer]) only if the fence still stands,
// atomically with the write; otherwise it fails with an error
// of the fenced class ([IsFencedError]) and writes nothing. The helpers
// of [WrapCore] pass their context to the core's writes, so Modify,
// UpdateWithConflicts, Teardown, AddFinalizer, RemoveFinalizer and
// TeardownAndDestroy are fenced like Create, Update and Destroy; a
// fenced-class error is not a conflict, and no helper retries it.
//
// A fence is made by the backend that checks it (the etcd state's
// elector makes the fences of its terms); a state ignores the fences of
// contexts unless it implements [Fencer] and accepts them.
type Fence interface {
	// String names the fence in errors and logs ("leadership of X, term
	// N").
	String() string
}

// fenceKey is the context key of a fence.
type fenceKey struct{}

// WithFence returns a context whose writes are fenced by f (a nil f
// returns ctx unchanged: no fence).
func WithFence(ctx context.Context, f Fence) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceOf returns the fence of ctx's writes, or nil.
func FenceOf(ctx context.Context) Fence {
	f, _ := ctx.Value(fenceKey{}).(Fence)
	return f
}

// Fencer is an optional interface of a [CoreState] that checks fences
// (see [Fence]). A state returned by [WrapCore] implements it by asking
// its core, and refuses every fence when the core does not implement it.
type Fencer interface {
	// CheckFence reports, without I/O, whether the state checks f on
	// the writes whose context carries it: nil when it does, else an
	// invalid-class error saying why not (a fence of another backend, of
	// another cluster).
	CheckFence(f Fence) error
}

// CheckFence implements [Fencer] for a wrapped core.
func (w *coreWrapper) CheckFence(f Fence) error {
	if fc, ok := w.CoreState.(Fencer); ok {
		return fc.CheckFence(f)
	}
	return NewInvalidError(nil, "state: %T does not check fences: leadership needs a state shared by the replicas that fences their writes (the etcd state)", w.CoreState)
}

// ErrFenced is the marker of the fenced class: a write refused because
// the fence of its context no longer stands (the leadership it was made
// under ended). Nothing was written.
type ErrFenced interface{ FencedError() }

// IsFencedError reports whether err is (or wraps) a fenced error.
func IsFencedError(err error) bool { return errclass.Is[ErrFenced](err) }

type fencedErr struct{ *classError }

func (fencedErr) FencedError() {}

// NewFencedError returns a fenced error about ptr (which may be nil).
func NewFencedError(ptr resource.Pointer, format string, args ...any) error {
	return fencedErr{newErr(ptr, format, args)}
}
