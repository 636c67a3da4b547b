package runtime

import (
	"context"
	"errors"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ErrReadOnlyView is wrapped by the error of every write to the
// Runtime's cached view ([Runtime.CachedState]).
var ErrReadOnlyView = errors.New("the Runtime's cached view is read-only: write to the state itself")

// CachedState returns the Runtime's cached view of its state as a
// read-only [state.State], for serving reads (a remote API, a debug
// page) without loading the state:
//
//   - Get and List of a cached kind (WithCachedResource) are served from
//     the cache once its watch has delivered its first bootstrap; until
//     then, and for every other kind, they read the state. A List from the
//     cache is the kind as the state held it at one revision (the cache's:
//     it may lag behind writes the watch has not delivered yet, and never
//     goes back); its options — label queries (their union, rule S15), ID
//     query, read-only snapshots (rule S7) — apply as on the state, and a
//     bad one is refused the same way.
//   - Watch, WatchKind and WatchKindAggregated are the state's own: the
//     cache follows that same stream.
//   - Every write (Create, Update, Destroy, and the State helpers built on
//     them: Modify, Teardown, finalizer edits...) writes nothing and
//     returns an invalid-class error (state.IsInvalidError) wrapping
//     [ErrReadOnlyView] — except a Modify or UpdateWithConflicts whose
//     function changes nothing, which writes nothing and returns nil, as
//     on any state (rule S6).
//
// The view may be taken before Run and used from any goroutine; its reads
// fall back to the state while the Runtime is not running.
func (r *Runtime) CachedState() state.State {
	return state.WrapCore(&cachedView{r: r})
}

// cachedView is the state.CoreState of CachedState.
type cachedView struct{ r *Runtime }

// Get implements [state.CoreState]: from the cache for a cached kind
// that is ready, from the state otherwise.
func (v *cachedView) Get(ctx context.Context, ptr resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	if c := v.r.caches.Get(resource.KindOf(ptr)); c.Ready() {
		if res, served, err := c.GetAt(ptr, opts, 0); served {
			return res, err
		}
	}
	return v.r.st.Get(ctx, ptr, opts...)
}

// List implements [state.CoreState]: from the cache for a cached kind
// that is ready, from the state otherwise.
func (v *cachedView) List(ctx context.Context, kind resource.Kind, opts ...state.ListOption) (resource.List, error) {
	if err := resource.ValidateKind(kind); err != nil {
		return resource.List{}, err
	}
	var o state.ListOptions
	opt.Apply(&o, opts)
	if err := o.Validate(kind); err != nil {
		return resource.List{}, err
	}
	if c := v.r.caches.Get(resource.KindOf(kind)); c.Ready() {
		if l, served, err := c.ListAt(opts, 0); served {
			return l, err
		}
	}
	return v.r.st.List(ctx, kind, opts...)
}

func (v *cachedView) readOnly(call string, ptr resource.Pointer) error {
	return state.NewInvalidError(ptr, "%s: %w", call, ErrReadOnlyView)
}

// pointerOf returns r's pointer for an error, nil when r has none.
func pointerOf(r resource.Resource) resource.Pointer {
	if _, err := state.ValidateResource(r); err != nil {
		return nil
	}
	return resource.PointerOf(r.Metadata())
}

// Create implements [state.CoreState]: refused (see CachedState).
func (v *cachedView) Create(_ context.Context, r resource.Resource, _ ...state.CreateOption) error {
	return v.readOnly("create", pointerOf(r))
}

// Update implements [state.CoreState]: refused (see CachedState).
func (v *cachedView) Update(_ context.Context, r resource.Resource, _ ...state.UpdateOption) error {
	return v.readOnly("update", pointerOf(r))
}

// Destroy implements [state.CoreState]: refused (see CachedState).
func (v *cachedView) Destroy(_ context.Context, ptr resource.Pointer, _ ...state.DestroyOption) error {
	if resource.ValidatePointer(ptr) != nil {
		ptr = nil
	}
	return v.readOnly("destroy", ptr)
}

// Watch implements [state.CoreState]: the state's.
func (v *cachedView) Watch(ctx context.Context, ptr resource.Pointer, ch chan<- state.Event, opts ...state.WatchOption) error {
	return v.r.st.Watch(ctx, ptr, ch, opts...)
}

// WatchKind implements [state.CoreState]: the state's.
func (v *cachedView) WatchKind(ctx context.Context, kind resource.Kind, ch chan<- state.Event, opts ...state.WatchKindOption) error {
	return v.r.st.WatchKind(ctx, kind, ch, opts...)
}

// WatchKindAggregated implements [state.CoreState]: the state's.
func (v *cachedView) WatchKindAggregated(ctx context.Context, kind resource.Kind, ch chan<- []state.Event, opts ...state.WatchKindOption) error {
	return v.r.st.WatchKindAggregated(ctx, kind, ch, opts...)
}
