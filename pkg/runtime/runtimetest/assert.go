package runtimetest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// AssertResource waits until the resource of type R with ID id exists and
// assertion passes on it, and returns a copy of it. It is the one way to
// wait for a resource: assertion makes its checks with the
// *assert.Assertions it is given (testify), as a test does, and passes when
// it records no failure; [Holds] turns bool predicates into an assertion,
// and a nil assertion passes on any state (the resource exists). It runs
// on every state the resource goes through, on a shared read-only snapshot
// (it must not modify it). When the time is up ([SetTimeout], [Within])
// the test fails with the failures the assertion recorded on the last
// state, and that state. R is inferred from assertion:
//
//	runtimetest.AssertResource(t, st, "eth0", func(r *LinkStatus, asrt *assert.Assertions) {
//		asrt.Equal(uint32(1500), r.TypedSpec().MTU)
//		asrt.True(r.TypedSpec().Up)
//	})
//	runtimetest.AssertResource(t, st, "eth0", runtimetest.Holds(func(r *LinkStatus) bool { return r.TypedSpec().Up }))
//	runtimetest.AssertResource[*LinkStatus](t, st, "eth0", nil)
//
// The resource is in R's default namespace unless [InNamespace] says
// otherwise.
func AssertResource[R typed.ResourceWithDefinition](tb testing.TB, st state.State, id resource.ID, assertion func(R, *assert.Assertions), opts ...WaitOption) R {
	tb.Helper()
	out := AssertResources(tb, st, []resource.ID{id}, assertion, opts...)
	if len(out) == 0 {
		return *new(R)
	}
	return out[0]
}

// AssertResources waits until every resource of type R with an ID in ids
// exists and assertion passes on each of them at the same time, and
// returns copies of them in the order of ids (see [AssertResource]). When
// the time is up the test fails with, for every resource that did not
// pass, the failures recorded on its last state (or that it is absent).
func AssertResources[R typed.ResourceWithDefinition](tb testing.TB, st state.State, ids []resource.ID, assertion func(R, *assert.Assertions), opts ...WaitOption) []R {
	tb.Helper()
	kind, c := kindOptions[R](tb, opts)
	wanted := map[resource.ID]*asserted[R]{}
	for _, id := range ids {
		wanted[id] = &asserted[R]{failures: "absent"}
	}
	ctx, cancel := context.WithTimeout(waitContext(tb), c.timeout)
	defer cancel()
	ch := make(chan []state.Event, 16)
	if err := st.WatchKindAggregated(ctx, kind, ch, state.WithBootstrapContents(true)); err != nil {
		tb.Fatalf("runtimetest: assert %s: %v", resource.KindString(kind), err)
		return nil
	}
	bootstrapped := false
	for {
		select {
		case <-ctx.Done():
			if err := stopCause(ctx); err != nil {
				tb.Fatalf("runtimetest: assert %s: %v", resource.KindString(kind), err)
				return nil
			}
			tb.Fatalf("runtimetest: assert %s: not passed within %s:\n%s%s", resource.KindString(kind), c.timeout, report(ids, wanted), failingText(tb))
			return nil
		case batch := <-ch:
			for _, ev := range batch {
				if ev.Type == state.Bootstrapped {
					bootstrapped = true
					continue
				}
				if ev.Type == state.Errored {
					tb.Fatalf("runtimetest: assert %s: watch failed: %v", resource.KindString(kind), ev.Error)
					return nil
				}
				a := wanted[ev.Resource.Metadata().ID()]
				if a == nil {
					continue
				}
				if err := a.check(ev, assertion); err != nil {
					tb.Fatalf("runtimetest: assert %s: %v", resource.KindString(kind), err)
					return nil
				}
			}
			if bootstrapped && allPassed(wanted) {
				out := make([]R, len(ids))
				for i, id := range ids {
					out[i] = wanted[id].last.DeepCopy().(R)
				}
				return out
			}
		}
	}
}

// AssertNoResource waits until the resource of type R with ID id does not
// exist, and fails the test when the time is up with its last state. The
// resource is in R's default namespace unless [InNamespace] says
// otherwise.
func AssertNoResource[R typed.ResourceWithDefinition](tb testing.TB, st state.State, id resource.ID, opts ...WaitOption) {
	tb.Helper()
	kind, c := kindOptions[R](tb, opts)
	ptr := resource.NewPointer(kind.Namespace(), kind.Type(), id)
	last := ""
	err := watchOne(waitContext(tb), st, ptr, c.timeout, func(r resource.Resource) (bool, error) {
		if r == nil {
			return true, nil
		}
		last = describe(r)
		return false, nil
	})
	if err != nil {
		tb.Fatalf("runtimetest: assert %s gone: %v; last seen: %s%s", resource.PointerString(ptr), err, last, failingText(tb))
	}
}

// Holds is the assertion that every one of preds holds: the bool-predicate
// form of [AssertResource] and the other assertions (T is the resource, or
// the list of [AssertAll]). A predicate that does not hold is recorded as
// a failure naming it by its place.
func Holds[T any](preds ...func(T) bool) func(T, *assert.Assertions) {
	return func(v T, asrt *assert.Assertions) {
		for i, p := range preds {
			if !p(v) {
				asrt.Fail(fmt.Sprintf("condition %d of %d does not hold", i+1, len(preds)))
				return
			}
		}
	}
}

// asserted is where one resource of AssertResources stands.
type asserted[R resource.Resource] struct {
	last     R      // its last state; valid when present
	present  bool   // it exists
	passed   bool   // the assertion passed on last
	failures string // what the assertion recorded on last, or "absent"
}

// check runs the assertion on the state ev leaves the resource in.
func (a *asserted[R]) check(ev state.Event, assertion func(R, *assert.Assertions)) error {
	if ev.Type == state.Destroyed {
		var zero R
		a.last, a.present, a.passed, a.failures = zero, false, false, "absent"
		return nil
	}
	r, ok := ev.Resource.(R)
	if !ok {
		return fmt.Errorf("%s is a %T, not a %T", resource.String(ev.Resource), ev.Resource, a.last)
	}
	a.last, a.present = r, true
	a.passed, a.failures = runAssertion(r, assertion, describe(r))
	return nil
}

// runAssertion runs assertion on v with a recorder and reports whether it
// recorded no failure, and the failures it recorded followed by last (what
// v is, for the report). A nil assertion passes.
func runAssertion[T any](v T, assertion func(T, *assert.Assertions), last string) (passed bool, failures string) {
	if assertion == nil {
		return true, ""
	}
	rec := &recorder{}
	func() {
		defer func() {
			if p := recover(); p != nil {
				rec.Errorf("the assertion panicked: %v", p)
			}
		}()
		assertion(v, assert.New(rec))
	}()
	if len(rec.failures) == 0 {
		return true, ""
	}
	failures = strings.Join(rec.failures, "\n")
	if last != "" {
		failures += "\nlast state: " + last
	}
	return false, failures
}

// allPassed reports whether every resource passed.
func allPassed[R resource.Resource](wanted map[resource.ID]*asserted[R]) bool {
	for _, a := range wanted {
		if !a.passed {
			return false
		}
	}
	return true
}

// report describes the resources that did not pass, in the order of ids.
func report[R resource.Resource](ids []resource.ID, wanted map[resource.ID]*asserted[R]) string {
	var b strings.Builder
	done := map[resource.ID]bool{}
	for _, id := range ids {
		if a := wanted[id]; !a.passed && !done[id] {
			done[id] = true
			fmt.Fprintf(&b, "--- %s: %s\n", id, indent(a.failures))
		}
	}
	return b.String()
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// recorder is the assert.TestingT of an assertion: it records failures
// instead of failing the test, so that a failed attempt is retried.
type recorder struct {
	failures []string
}

// Errorf records a failure.
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, withoutErrorTrace(strings.TrimSpace(fmt.Sprintf(format, args...))))
}

// withoutErrorTrace drops the "Error Trace:" section of a testify failure
// (the frames of this package and of the retry, which say nothing about
// what failed); the rest stays as testify wrote it.
func withoutErrorTrace(msg string) string {
	lines := strings.Split(msg, "\n")
	out := lines[:0]
	skipping := false
	for _, l := range lines {
		field := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(field, "Error Trace:"):
			skipping = true
			continue
		case skipping && strings.Contains(field, ":") && !strings.HasPrefix(field, "/"):
			skipping = false
		case skipping:
			continue
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
