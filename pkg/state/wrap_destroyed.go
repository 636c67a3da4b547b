package state

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// tdCalls is the bookkeeping that lets TeardownAndDestroy tell a resource
// that did not exist at the call (not-found) from one that existed and was
// destroyed by someone else before the call could read it (success, the
// goal is reached): every call registers its pointer while it runs, and a
// Destroy made through this State marks every call registered for that
// pointer. Its cost when no TeardownAndDestroy runs is one atomic load per
// Destroy; its memory is one entry per call in flight.
type tdCalls struct {
	active atomic.Int32
	mu     sync.Mutex
	// byPtr are the calls in flight per pointer; protected by mu.
	byPtr map[resource.Pointer][]*tdCall
}

// tdCall is one TeardownAndDestroy call in flight.
type tdCall struct {
	// destroyed is set when the resource was destroyed through this State
	// while the call was registered; protected by tdCalls.mu.
	destroyed bool
}

// join registers a call on ptr (a resource.PointerOf value).
func (t *tdCalls) join(ptr resource.Pointer) *tdCall {
	c := &tdCall{}
	t.mu.Lock()
	if t.byPtr == nil {
		t.byPtr = map[resource.Pointer][]*tdCall{}
	}
	t.byPtr[ptr] = append(t.byPtr[ptr], c)
	t.mu.Unlock()
	t.active.Add(1)
	return c
}

// leave unregisters c and reports whether the resource was destroyed
// through this State while c was registered.
func (t *tdCalls) leave(ptr resource.Pointer, c *tdCall) bool {
	t.active.Add(-1)
	t.mu.Lock()
	defer t.mu.Unlock()
	calls := t.byPtr[ptr]
	for i, o := range calls {
		if o == c {
			calls = append(calls[:i], calls[i+1:]...)
			break
		}
	}
	if len(calls) == 0 {
		delete(t.byPtr, ptr)
	} else {
		t.byPtr[ptr] = calls
	}
	return c.destroyed
}

// wasDestroyed reports whether the resource was destroyed through this
// State since c registered.
func (t *tdCalls) wasDestroyed(c *tdCall) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return c.destroyed
}

// destroyed marks the calls registered on ptr.
func (t *tdCalls) destroyed(ptr resource.Pointer) {
	if t.active.Load() == 0 {
		return
	}
	p := resource.PointerOf(ptr)
	t.mu.Lock()
	for _, c := range t.byPtr[p] {
		c.destroyed = true
	}
	t.mu.Unlock()
}

// Destroy is the core's Destroy; a success is noted for the
// TeardownAndDestroy calls in flight on the pointer (see tdCalls).
func (w *coreWrapper) Destroy(ctx context.Context, ptr resource.Pointer, opts ...DestroyOption) error {
	err := w.CoreState.Destroy(ctx, ptr, opts...)
	if err == nil {
		w.td.destroyed(ptr)
	}
	return err
}
