package state

import (
	"context"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
)

// WatchFor implements [State.WatchFor]: it watches ptr and returns the
// first state of the resource (starting with the current one) that satisfies
// every condition.
//
// Without [WithEventTypes] only states of an existing resource (Created and
// Updated events) are considered; list Destroyed in WithEventTypes to wait
// for the resource to be gone (the returned resource is then the last state
// seen, or one that carries only the pointer if it never existed). An error
// from a [WithCondition] function, or from the watch, ends the wait with
// that error: a watch failure is an Errored event (the error wraps its
// error), a stream the core closed (wraps [ErrWatchClosed]), or an event
// whose resource is missing, has no metadata, names another resource or
// panics in Metadata. A nil condition is refused with an invalid-class
// error naming its position (a condition is a required argument, not an
// option that a nil skips). WithEventTypes may list Bootstrapped, Errored or
// Noop, but they never match: a single-resource watch never sends the first,
// the second is a failure and the third carries no resource.
func (w *coreWrapper) WatchFor(ctx context.Context, ptr resource.Pointer, conds ...WatchForConditionFunc) (resource.Resource, error) {
	if err := resource.ValidatePointer(ptr); err != nil {
		return nil, err
	}
	ptr = resource.PointerOf(ptr)
	var cond WatchForCondition
	for i, c := range conds {
		if c == nil {
			// A condition is what the call waits for, not an option: a nil
			// one is a missing argument, never skipped.
			return nil, NewInvalidError(ptr, "WatchFor: condition %d of %d is nil", i+1, len(conds))
		}
		if err := c(&cond); err != nil {
			return nil, err
		}
	}
	for _, fn := range cond.Conditions {
		if fn == nil {
			return nil, NewInvalidError(ptr, "nil WatchFor condition function")
		}
	}
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan Event, 1)
	if err := w.Watch(watchCtx, ptr, ch); err != nil {
		return nil, err
	}
	for {
		ev, md, err := nextEvent(ctx, ptr, ch)
		if err != nil {
			return nil, err
		}
		ok, err := cond.matches(ev, md)
		if err != nil {
			return nil, err
		}
		if ok {
			return ev.Resource, nil
		}
	}
}

// matches reports whether ev, whose resource's metadata is md, satisfies
// every part of c.
func (c *WatchForCondition) matches(ev Event, md *resource.Metadata) (bool, error) {
	switch {
	case len(c.EventTypes) > 0:
		if !slices.Contains(c.EventTypes, ev.Type) {
			return false, nil
		}
	case ev.Type != Created && ev.Type != Updated:
		return false, nil
	}
	if len(c.Phases) > 0 && !slices.Contains(c.Phases, md.Phase()) {
		return false, nil
	}
	if c.FinalizerEmpty && !md.Finalizers().Empty() {
		return false, nil
	}
	for _, fn := range c.Conditions {
		ok, err := fn(ev.Resource)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}
