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

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// AssertAll waits until assertion passes on the list of every resource of
// type R (in R's default namespace, or [InNamespace]'s), sorted by ID, and
// returns copies of them. assertion runs once the current resources are
// known and after every batch of changes, on shared read-only snapshots;
// [Holds] gives it as bool predicates. When the time is up the test fails
// with what the assertion recorded on the last list.
func AssertAll[R typed.ResourceWithDefinition](tb testing.TB, st state.State, assertion func([]R, *assert.Assertions), opts ...WaitOption) []R {
	tb.Helper()
	kind, c := kindOptions[R](tb, opts)
	ctx, cancel := context.WithTimeout(waitContext(tb), c.timeout)
	defer cancel()
	ch := make(chan []state.Event, 16)
	if err := st.WatchKindAggregated(ctx, kind, ch, state.WithBootstrapContents(true)); err != nil {
		tb.Fatalf("runtimetest: assert all %s: %v", resource.KindString(kind), err)
		return nil
	}
	items := map[resource.ID]R{}
	failures, bootstrapped := "not listed yet", false
	for {
		select {
		case <-ctx.Done():
			if err := stopCause(ctx); err != nil {
				tb.Fatalf("runtimetest: assert all %s: %v", resource.KindString(kind), err)
				return nil
			}
			tb.Fatalf("runtimetest: assert all %s: not passed within %s: %s%s", resource.KindString(kind), c.timeout, indent(failures), failingText(tb))
			return nil
		case batch := <-ch:
			if err := applyBatch(items, batch, &bootstrapped); err != nil {
				tb.Fatalf("runtimetest: assert all %s: %v", resource.KindString(kind), err)
				return nil
			}
			if !bootstrapped {
				continue
			}
			list := slices.SortedFunc(maps.Values(items), func(a, b R) int { return cmp.Compare(a.Metadata().ID(), b.Metadata().ID()) })
			var passed bool
			if passed, failures = runAssertion(list, assertion, "IDs ["+strings.Join(slices.Sorted(maps.Keys(items)), " ")+"]"); passed {
				out := make([]R, len(list))
				for i, r := range list {
					out[i] = r.DeepCopy().(R)
				}
				return out
			}
		}
	}
}

// applyBatch applies a batch of a kind's events to items.
func applyBatch[R resource.Resource](items map[resource.ID]R, batch []state.Event, bootstrapped *bool) error {
	for _, ev := range batch {
		switch ev.Type {
		case state.Bootstrapped:
			*bootstrapped = true
		case state.Errored:
			return fmt.Errorf("watch failed: %w", ev.Error)
		case state.Destroyed:
			delete(items, ev.Resource.Metadata().ID())
		case state.Created, state.Updated:
			r, ok := ev.Resource.(R)
			if !ok {
				return fmt.Errorf("%s is a %T, not a %T", resource.String(ev.Resource), ev.Resource, r)
			}
			items[r.Metadata().ID()] = r
		}
	}
	return nil
}

// AssertState waits until assertion passes, running it now and after
// every change of the kinds: the general form of the other assertions, for
// conditions over several resources or kinds. assertion reads what it
// needs itself (st.Get, List, the safe helpers) with the context it is
// given. When the time is up the test fails with what it recorded last.
func AssertState(tb testing.TB, st state.State, kinds []resource.Kind, assertion func(context.Context, *assert.Assertions), opts ...WaitOption) {
	tb.Helper()
	c := waitOptions(tb, "", opts)
	ctx, cancel := context.WithTimeout(waitContext(tb), c.timeout)
	defer cancel()
	changed := make(chan []state.Event, 1)
	for _, k := range kinds {
		if err := st.WatchKindAggregated(ctx, k, changed); err != nil {
			tb.Fatalf("runtimetest: watch %s: %v", resource.KindString(k), err)
			return
		}
	}
	for {
		passed, failures := runAssertion(ctx, assertion, "")
		if passed {
			return
		}
		select {
		case <-ctx.Done():
			if err := stopCause(ctx); err != nil {
				tb.Fatalf("runtimetest: %v", err)
				return
			}
			tb.Fatalf("runtimetest: assertion not passed within %s: %s%s", c.timeout, indent(failures), failingText(tb))
			return
		case <-changed:
		}
	}
}

// watchOne calls check with every state of the resource ptr (nil when
// absent), from its current one on, until check returns true or an error,
// or until timeout (or parent is done: a report stopped the test).
func watchOne(parent context.Context, st state.State, ptr resource.Pointer, timeout time.Duration, check func(resource.Resource) (bool, error)) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	ch := make(chan state.Event, 16)
	if err := st.Watch(ctx, ptr, ch); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if err := stopCause(ctx); err != nil {
				return err
			}
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
