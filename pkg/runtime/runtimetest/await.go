package runtimetest

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// Create creates the resources in st, failing the test on the first error.
func Create(tb testing.TB, st state.State, rs ...resource.Resource) {
	tb.Helper()
	for _, r := range rs {
		if err := st.Create(context.Background(), r); err != nil {
			tb.Fatalf("runtimetest: create %s: %v", resource.String(r), err)
		}
	}
}

// Await waits until the resource of type R with ID id (in R's default
// namespace) exists and every cond holds on it, and returns a copy of it.
// The conditions are checked on every state the resource goes through
// (they receive shared read-only snapshots: they must not modify them).
// After the test's timeout ([SetTimeout], default [DefaultTimeout]) it
// fails the test with the last state seen.
func Await[R typed.ResourceWithDefinition](tb testing.TB, st state.State, id resource.ID, conds ...func(R) bool) R {
	tb.Helper()
	return AwaitPointer(tb, st, typed.Pointer[R](id), conds...)
}

// AwaitPointer is [Await] for the resource ptr, in any namespace.
func AwaitPointer[R resource.Resource](tb testing.TB, st state.State, ptr resource.Pointer, conds ...func(R) bool) R {
	tb.Helper()
	var got R
	last := "absent"
	err := watchOne(st, ptr, timeoutOf(tb), func(r resource.Resource) (bool, error) {
		if r == nil {
			last = "absent"
			return false, nil
		}
		typedR, ok := r.(R)
		if !ok {
			return false, fmt.Errorf("%s is a %T, not a %T", resource.String(r), r, got)
		}
		last = describe(r)
		for _, c := range conds {
			if !c(typedR) {
				return false, nil
			}
		}
		got = typedR.DeepCopy().(R)
		return true, nil
	})
	if err != nil {
		tb.Fatalf("runtimetest: await %s: %v; last seen: %s", resource.PointerString(ptr), err, last)
	}
	return got
}

// AwaitMetadata waits until the resource ptr (of any type, in any
// namespace) exists and cond holds on its metadata (phase, finalizers,
// owner, labels, ...), and returns a copy of that metadata. cond is checked
// on every state the resource goes through and receives a shared read-only
// snapshot: it must not modify it. After the test's timeout ([SetTimeout],
// default [DefaultTimeout]) it fails the test with the last state seen.
func AwaitMetadata(tb testing.TB, st state.State, ptr resource.Pointer, cond func(*resource.Metadata) bool) *resource.Metadata {
	tb.Helper()
	r := AwaitPointer(tb, st, ptr, func(r resource.Resource) bool { return cond(r.Metadata()) })
	if r == nil { // tb failed without stopping the goroutine (not a *testing.T)
		return nil
	}
	return r.Metadata() // of the copy AwaitPointer returns
}

// AwaitGone waits until the resource of type R with ID id (in R's default
// namespace) does not exist, and fails the test after the test's timeout
// ([SetTimeout], default [DefaultTimeout]) with its last state.
func AwaitGone[R typed.ResourceWithDefinition](tb testing.TB, st state.State, id resource.ID) {
	tb.Helper()
	AwaitGonePointer(tb, st, typed.Pointer[R](id))
}

// AwaitGonePointer is [AwaitGone] for the resource ptr, in any namespace.
func AwaitGonePointer(tb testing.TB, st state.State, ptr resource.Pointer) {
	tb.Helper()
	awaitGone(tb, st, ptr, timeoutOf(tb))
}

func awaitGone(tb testing.TB, st state.State, ptr resource.Pointer, timeout time.Duration) {
	tb.Helper()
	last := ""
	err := watchOne(st, ptr, timeout, func(r resource.Resource) (bool, error) {
		if r == nil {
			return true, nil
		}
		last = describe(r)
		return false, nil
	})
	if err != nil {
		tb.Fatalf("runtimetest: await %s gone: %v; last seen: %s", resource.PointerString(ptr), err, last)
	}
}

// AwaitAll waits until cond holds on every resource of type R in R's
// default namespace (sorted by ID), and returns copies of them. cond is
// checked once the current resources are known and after every batch of
// changes; it receives shared read-only snapshots. After the test's timeout
// ([SetTimeout], default [DefaultTimeout]) it fails the test with the IDs
// it saw last.
func AwaitAll[R typed.ResourceWithDefinition](tb testing.TB, st state.State, cond func([]R) bool) []R {
	tb.Helper()
	kind := typed.Kind[R]()
	timeout := timeoutOf(tb)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ch := make(chan []state.Event, 16)
	if err := st.WatchKindAggregated(ctx, kind, ch, state.WithBootstrapContents(true)); err != nil {
		tb.Fatalf("runtimetest: await all %s: %v", resource.KindString(kind), err)
	}
	items := map[resource.ID]R{}
	var list []R
	bootstrapped := false
	for {
		select {
		case <-ctx.Done():
			ids := slices.Sorted(maps.Keys(items))
			tb.Fatalf("runtimetest: await all %s: condition not met within %s; last seen IDs: [%s]", resource.KindString(kind), timeout, strings.Join(ids, " "))
			return nil
		case batch := <-ch:
			for _, ev := range batch {
				switch ev.Type {
				case state.Bootstrapped:
					bootstrapped = true
				case state.Errored:
					tb.Fatalf("runtimetest: await all %s: watch failed: %v", resource.KindString(kind), ev.Error)
				case state.Destroyed:
					delete(items, ev.Resource.Metadata().ID())
				case state.Created, state.Updated:
					r, ok := ev.Resource.(R)
					if !ok {
						tb.Fatalf("runtimetest: await all %s: %s is a %T, not a %T", resource.KindString(kind), resource.String(ev.Resource), ev.Resource, r)
					}
					items[r.Metadata().ID()] = r
				}
			}
			if !bootstrapped {
				continue
			}
			list = slices.SortedFunc(maps.Values(items), func(a, b R) int { return cmp.Compare(a.Metadata().ID(), b.Metadata().ID()) })
			if cond(list) {
				out := make([]R, len(list))
				for i, r := range list {
					out[i] = r.DeepCopy().(R)
				}
				return out
			}
		}
	}
}

// AwaitState waits until cond holds, checking it now and after every change
// of the kinds, and fails the test after the test's timeout ([SetTimeout],
// default [DefaultTimeout]) with the reason cond gave last. cond reads what
// it needs itself (st.Get, List, the safe helpers); it is the general form
// of the other waits, for conditions over several resources or kinds.
func AwaitState(tb testing.TB, st state.State, kinds []resource.Kind, cond func(ctx context.Context) (ok bool, why string)) {
	tb.Helper()
	timeout := timeoutOf(tb)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	changed := make(chan []state.Event, 1)
	for _, k := range kinds {
		if err := st.WatchKindAggregated(ctx, k, changed); err != nil {
			tb.Fatalf("runtimetest: watch %s: %v", resource.KindString(k), err)
		}
	}
	for {
		ok, why := cond(ctx)
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("runtimetest: condition not met within %s: %s", timeout, why)
			return
		case <-changed:
		}
	}
}

// watchOne calls check with every state of the resource ptr (nil when
// absent), from its current one on, until check returns true or an error,
// or until timeout.
func watchOne(st state.State, ptr resource.Pointer, timeout time.Duration, check func(resource.Resource) (bool, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ch := make(chan state.Event, 16)
	if err := st.Watch(ctx, ptr, ch); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("condition not met within %s", timeout)
		case ev := <-ch:
			var r resource.Resource
			switch ev.Type {
			case state.Created, state.Updated:
				r = ev.Resource
			case state.Destroyed:
			case state.Errored:
				return fmt.Errorf("watch failed: %w", ev.Error)
			default:
				continue
			}
			if ok, err := check(r); ok || err != nil {
				return err
			}
		}
	}
}

// describe formats a resource for a failure report: its metadata and its
// spec, redacted when it holds secrets (resource.SpecRedacter).
func describe(r resource.Resource) string {
	return fmt.Sprintf("%s spec=%s", r.Metadata(), resource.SpecString(r))
}
