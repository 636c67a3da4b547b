package state_test

import (
	"context"
	"sync"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// fakeCore is a minimal CoreState for testing WrapCore in isolation: a map
// under a mutex, write counting, fault injection, and single-resource
// watches that coalesce to the newest state. Kind watches and lists are out
// of WrapCore's reach and are not implemented.
type fakeCore struct {
	mu sync.Mutex
	// res holds the stored resources; guarded by mu.
	res map[resource.Pointer]resource.Resource
	// writes counts successful Create, Update and Destroy calls; guarded by mu.
	writes int
	// updateConflicts is the number of upcoming Updates to fail with a
	// version conflict; guarded by mu.
	updateConflicts int
	// beforeCreate, when set, runs (without mu) at the start of Create.
	beforeCreate func()
	// beforeDestroy, when set, runs (without mu) at the start of Destroy.
	beforeDestroy func()
	// watchErr, when set, makes every watch send one Errored event and stop.
	watchErr error
	// watchers are the wake-up channels of live watches; guarded by mu.
	watchers map[chan struct{}]struct{}
}

func newFakeCore() *fakeCore {
	return &fakeCore{res: map[resource.Pointer]resource.Resource{}, watchers: map[chan struct{}]struct{}{}}
}

func (f *fakeCore) writeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

func (f *fakeCore) watcherCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

// changedLocked counts a write and wakes every watcher; mu must be held.
func (f *fakeCore) changedLocked() {
	f.writes++
	for w := range f.watchers {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}

func (f *fakeCore) Get(_ context.Context, ptr resource.Pointer, _ ...state.GetOption) (resource.Resource, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.res[resource.PointerOf(ptr)]
	if !ok {
		return nil, state.NewNotFoundError(resource.PointerOf(ptr), "not found")
	}
	return r.DeepCopy(), nil
}

func (f *fakeCore) List(context.Context, resource.Kind, ...state.ListOption) (resource.List, error) {
	panic("fakeCore: List is not used by WrapCore")
}

func (f *fakeCore) Create(_ context.Context, r resource.Resource, opts ...state.CreateOption) error {
	if f.beforeCreate != nil {
		f.beforeCreate()
	}
	var o state.CreateOptions
	for _, opt := range opts {
		opt(&o)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ptr := resource.PointerOf(r.Metadata())
	if _, ok := f.res[ptr]; ok {
		return state.NewConflictError(ptr, "already exists")
	}
	md := r.Metadata()
	md.SetVersion(resource.VersionUndefined.Next())
	md.SetPhase(resource.PhaseRunning)
	now := time.Now()
	md.SetCreated(now)
	md.SetUpdated(now)
	c := r.DeepCopy()
	_ = c.Metadata().SetOwner("")
	_ = c.Metadata().SetOwner(o.Owner)
	f.res[ptr] = c
	f.changedLocked()
	return nil
}

func (f *fakeCore) Update(_ context.Context, r resource.Resource, opts ...state.UpdateOption) error {
	o := state.DefaultUpdateOptions()
	for _, opt := range opts {
		opt(&o)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ptr := resource.PointerOf(r.Metadata())
	cur, ok := f.res[ptr]
	if !ok {
		return state.NewNotFoundError(ptr, "not found")
	}
	if f.updateConflicts > 0 {
		f.updateConflicts--
		return state.NewConflictError(ptr, "injected version conflict")
	}
	cmd := cur.Metadata()
	if !cmd.Version().Equal(r.Metadata().Version()) {
		return state.NewConflictError(ptr, "version %s, stored %s", r.Metadata().Version(), cmd.Version())
	}
	if cmd.Owner() != o.Owner {
		return state.NewOwnerConflictError(ptr, "owner %q, stored %q", o.Owner, cmd.Owner())
	}
	if o.ExpectedPhase != nil && cmd.Phase() != *o.ExpectedPhase {
		return state.NewPhaseConflictError(ptr, "phase %s, expected %s", cmd.Phase(), *o.ExpectedPhase)
	}
	md := r.Metadata()
	md.SetVersion(cmd.Version().Next())
	md.SetUpdated(time.Now())
	c := r.DeepCopy()
	_ = c.Metadata().SetOwner("")
	_ = c.Metadata().SetOwner(cmd.Owner())
	c.Metadata().SetCreated(cmd.Created())
	f.res[ptr] = c
	f.changedLocked()
	return nil
}

func (f *fakeCore) Destroy(_ context.Context, ptr resource.Pointer, opts ...state.DestroyOption) error {
	if f.beforeDestroy != nil {
		f.beforeDestroy()
	}
	var o state.DestroyOptions
	for _, opt := range opts {
		opt(&o)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ptr = resource.PointerOf(ptr)
	cur, ok := f.res[ptr]
	if !ok {
		return state.NewNotFoundError(ptr, "not found")
	}
	if cur.Metadata().Owner() != o.Owner {
		return state.NewOwnerConflictError(ptr, "owner %q, stored %q", o.Owner, cur.Metadata().Owner())
	}
	if !cur.Metadata().Finalizers().Empty() {
		return state.NewPendingFinalizersError(ptr, "finalizers %v", *cur.Metadata().Finalizers())
	}
	delete(f.res, ptr)
	f.changedLocked()
	return nil
}

// Watch sends the current state, then the newest state after each change
// (coalesced: a watcher that lags sees only the newest state).
func (f *fakeCore) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, _ ...state.WatchOption) error {
	ptr = resource.PointerOf(ptr)
	if f.watchErr != nil {
		go func() {
			select {
			case ch <- state.Event{Type: state.Errored, Error: f.watchErr}:
			case <-ctx.Done():
			}
		}()
		return nil
	}
	wake := make(chan struct{}, 1)
	f.mu.Lock()
	f.watchers[wake] = struct{}{}
	f.mu.Unlock()
	go func() {
		defer func() {
			f.mu.Lock()
			delete(f.watchers, wake)
			f.mu.Unlock()
		}()
		var last resource.Resource
		first := true
		for {
			f.mu.Lock()
			cur, ok := f.res[ptr]
			if ok {
				// An event's resource is a shared snapshot (rule S7),
				// which this watch keeps too (last): frozen, as every
				// state shares its snapshots.
				cur = cur.DeepCopy()
				cur.Metadata().Freeze()
			}
			f.mu.Unlock()
			var ev state.Event
			switch {
			case ok && last == nil:
				ev = state.Event{Type: state.Created, Resource: cur}
			case ok && !cur.Metadata().Version().Equal(last.Metadata().Version()):
				ev = state.Event{Type: state.Updated, Resource: cur, Old: last}
			case !ok && last != nil:
				ev = state.Event{Type: state.Destroyed, Resource: last}
			case !ok && first:
				ev = state.Event{Type: state.Destroyed, Resource: &pointerOnly{md: resource.NewMetadata(ptr.Namespace(), ptr.Type(), ptr.ID(), resource.VersionUndefined)}}
			}
			first = false
			if ev.Resource != nil {
				select {
				case ch <- ev:
				case <-ctx.Done():
					return
				}
				if ok {
					last = cur
				} else {
					last = nil
				}
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

func (f *fakeCore) WatchKind(context.Context, resource.Kind, chan<- state.Event, ...state.WatchKindOption) error {
	panic("fakeCore: WatchKind is not used by WrapCore")
}

func (f *fakeCore) WatchKindAggregated(context.Context, resource.Kind, chan<- []state.Event, ...state.WatchKindOption) error {
	panic("fakeCore: WatchKindAggregated is not used by WrapCore")
}

// pointerOnly is the resource of a Destroyed event for a resource that never
// existed: metadata carrying only the pointer.
type pointerOnly struct{ md resource.Metadata }

func (p *pointerOnly) Metadata() *resource.Metadata { return &p.md }
func (p *pointerOnly) Spec() any                    { return nil }
func (p *pointerOnly) DeepCopy() resource.Resource  { return &pointerOnly{md: p.md.Copy()} }
