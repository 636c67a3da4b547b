package adapter

import (
	"context"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// Fencing is the state a controller writes through under leadership (rule
// E4): every write is made with the fence of the term the controller runs
// under ([state.WithFence]), and refused at once — a fenced-class error,
// nothing written — while it runs under none (it is a standby, or its
// term ended). A write the state refuses because the fence no longer
// stands is reported to the term's lost function: the Runtime stops the
// controller. Reads pass through.
type Fencing struct {
	state.State
	name string
	cur  atomic.Pointer[lead]
}

// lead is the term a controller's writes are fenced by.
type lead struct {
	fence state.Fence // nil: not leading
	lost  func(error)
}

// Fenced makes every write of the adapter go through the returned
// Fencing, which refuses them until [Fencing.Lead]. It is called once,
// before the controller runs.
func (a *Adapter) Fenced() *Fencing {
	f := &Fencing{State: a.st, name: a.name}
	f.cur.Store(&lead{})
	a.st = f
	return f
}

// Lead fences the controller's writes by fence from now on; lost is
// called with the error of each write the state refuses because the
// fence no longer stands.
func (f *Fencing) Lead(fence state.Fence, lost func(error)) {
	f.cur.Store(&lead{fence: fence, lost: lost})
}

// Standby refuses the controller's writes from now on.
func (f *Fencing) Standby() { f.cur.Store(&lead{}) }

// enter returns the context of a write of ptr and its term, or the error
// refusing it.
func (f *Fencing) enter(ctx context.Context, ptr resource.Pointer) (context.Context, *lead, error) {
	l := f.cur.Load()
	if l.fence == nil {
		return nil, nil, state.NewFencedError(ptr, "controller %q does not lead in this replica: write refused", f.name)
	}
	return state.WithFence(ctx, l.fence), l, nil
}

// check reports a fenced refusal to the term and returns err.
func (l *lead) check(err error) error {
	if err != nil && state.IsFencedError(err) {
		l.lost(err)
	}
	return err
}

// pointerOf returns r's pointer for an error, or nil when r has none.
func pointerOf(r resource.Resource) resource.Pointer {
	if r == nil {
		return nil
	}
	if md := r.Metadata(); md != nil {
		return resource.PointerOf(md)
	}
	return nil
}

func (f *Fencing) Create(ctx context.Context, r resource.Resource, opts ...state.CreateOption) error {
	ctx, l, err := f.enter(ctx, pointerOf(r))
	if err != nil {
		return err
	}
	return l.check(f.State.Create(ctx, r, opts...))
}

func (f *Fencing) Update(ctx context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	ctx, l, err := f.enter(ctx, pointerOf(r))
	if err != nil {
		return err
	}
	return l.check(f.State.Update(ctx, r, opts...))
}

func (f *Fencing) Destroy(ctx context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return err
	}
	return l.check(f.State.Destroy(ctx, ptr, opts...))
}

func (f *Fencing) UpdateWithConflicts(ctx context.Context, ptr resource.Pointer, fn state.UpdaterFunc, opts ...state.UpdateOption) (resource.Resource, error) {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return nil, err
	}
	r, err := f.State.UpdateWithConflicts(ctx, ptr, fn, opts...)
	return r, l.check(err)
}

func (f *Fencing) Teardown(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownOption) (bool, error) {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return false, err
	}
	ok, err := f.State.Teardown(ctx, ptr, opts...)
	return ok, l.check(err)
}

func (f *Fencing) TeardownAndDestroy(ctx context.Context, ptr resource.Pointer, opts ...state.TeardownAndDestroyOption) error {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return err
	}
	return l.check(f.State.TeardownAndDestroy(ctx, ptr, opts...))
}

func (f *Fencing) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return err
	}
	return l.check(f.State.AddFinalizer(ctx, ptr, fins...))
}

func (f *Fencing) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	ctx, l, err := f.enter(ctx, ptr)
	if err != nil {
		return err
	}
	return l.check(f.State.RemoveFinalizer(ctx, ptr, fins...))
}

func (f *Fencing) Modify(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) error {
	ctx, l, err := f.enter(ctx, pointerOf(emptyResource))
	if err != nil {
		return err
	}
	return l.check(f.State.Modify(ctx, emptyResource, fn, opts...))
}

func (f *Fencing) ModifyWithResult(ctx context.Context, emptyResource resource.Resource, fn func(resource.Resource) error, opts ...state.UpdateOption) (resource.Resource, error) {
	ctx, l, err := f.enter(ctx, pointerOf(emptyResource))
	if err != nil {
		return nil, err
	}
	r, err := f.State.ModifyWithResult(ctx, emptyResource, fn, opts...)
	return r, l.check(err)
}
