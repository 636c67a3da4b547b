package adapter_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/adapter"
	"github.com/resgraph/resgraph/pkg/runtime/internal/cache"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// BenchmarkCachedGet is a controller's read-only Get of a resource of a
// cached kind (1000 resources) over inmem: "cache" when the cache is at
// the controller's floor (served without asking the state), "verify" when
// a write of another kind raised the floor past the cache (the cache asks
// the state's KindRevision, then serves; the write is in the loop), and
// "state-after-write", the same loop reading the state itself, for
// comparison.
func BenchmarkCachedGet(b *testing.B) {
	ctx := context.Background()
	st := inmem.NewState()
	caches := cache.NewSet([]resource.Kind{kind(typeA)}).WithRevisions(st.(state.RevisionReporter))
	c := caches.Get(resource.KindOf(kind(typeA)))
	const n = 1000
	var events []state.Event
	var metas []*resource.Metadata
	for i := range n {
		r := newPair(typeA, fmt.Sprint(i), i)
		if err := st.Create(ctx, r); err != nil {
			b.Fatal(err)
		}
		events = append(events, state.Event{Type: state.Created, Resource: r})
		metas = append(metas, r.Metadata())
	}
	rev, err := st.(state.RevisionReporter).Revision(ctx)
	if err != nil {
		b.Fatal(err)
	}
	c.ApplyBatch(events, metas, rev, true)
	c.MarkReady()
	a := adapter.New(st, caches, "c", adapter.NewAccess(
		[]controller.Input{in(typeA, controller.InputWeak)}, nil,
		[]controller.Output{out(typeB, controller.OutputExclusive)}), nil, false)
	p := ptr(typeA, "500")
	other := newPair(typeB, "other", 0)
	if err := a.Create(ctx, other); err != nil {
		b.Fatal(err)
	}
	write := func() {
		other.TypedSpec().A++
		if err := a.Update(ctx, other); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("cache", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Get(ctx, p, state.WithReadOnlyGet()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			write()
			if _, err := a.Get(ctx, p, state.WithReadOnlyGet()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("state-after-write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			write()
			if _, err := st.Get(ctx, p, state.WithReadOnlyGet()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkModify is a controller's Modify of its output over inmem:
// "noop" leaves it equal (nothing written), "write" changes it.
func BenchmarkModify(b *testing.B) {
	ctx := context.Background()
	st := inmem.NewState()
	a := adapter.New(st, cache.NewSet(nil), "c", adapter.NewAccess(nil, nil,
		[]controller.Output{out(typeB, controller.OutputExclusive)}), nil, false)
	empty := newPair(typeB, "1", 0)
	for _, bc := range []struct {
		name string
		next func(int) int
	}{{"noop", func(int) int { return 1 }}, {"write", func(a int) int { return a + 1 }}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Modify(ctx, empty, func(r resource.Resource) error {
					p := r.(*Pair)
					p.TypedSpec().A = bc.next(p.TypedSpec().A)
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// caughtUp is the routing of a kind that routing has caught up with (its
// watch routed every change).
type caughtUp struct{}

func (caughtUp) Routed() uint64                      { return ^uint64(0) }
func (caughtUp) Await(context.Context, uint64) error { return nil }

// BenchmarkMappedRead is a QController's read-only Get of a resource of
// an InputQMapped kind that is not cached (1000 resources) over inmem:
// "routed" when its reads wait for routing (the Runtime's QControllers;
// routing caught up: one KindRevision more per read), "plain" when they
// do not (the cost before rule Q4's read check).
func BenchmarkMappedRead(b *testing.B) {
	ctx := context.Background()
	st := inmem.NewState()
	for i := range 1000 {
		if err := st.Create(ctx, newPair(typeA, fmt.Sprint(i), i)); err != nil {
			b.Fatal(err)
		}
	}
	p := ptr(typeA, "500")
	for _, routed := range []bool{false, true} {
		a := adapter.New(st, nil, "q", adapter.NewAccess(
			[]controller.Input{in(typeA, controller.InputQMapped)}, nil, nil), nil, false)
		name := "plain"
		if routed {
			a.SetMappedRouting(map[resource.KindKey]adapter.RoutedKind{resource.KindOf(kind(typeA)): caughtUp{}})
			name = "routed"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Get(ctx, p, state.WithReadOnlyGet()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTappedPass is a Controller's pass over inmem while a BatchLog
// that keeps nothing is set ("tapped") or none is ("untapped"): a Get of
// an uncached input (1000 resources) and a Modify that writes its
// output, each loop. The difference is what the adapter itself spends
// on a flight recorder's pass log (the log's own work excluded).
func BenchmarkTappedPass(b *testing.B) {
	ctx := context.Background()
	st := inmem.NewState()
	for i := range 1000 {
		if err := st.Create(ctx, newPair(typeA, fmt.Sprint(i), i)); err != nil {
			b.Fatal(err)
		}
	}
	a := adapter.New(st, cache.NewSet(nil), "c", adapter.NewAccess(
		[]controller.Input{in(typeA, controller.InputWeak)}, nil,
		[]controller.Output{out(typeB, controller.OutputExclusive)}), nil, false)
	p, o := ptr(typeA, "500"), newPair(typeB, "1", 0)
	for _, tapped := range []bool{false, true} {
		b.Run(map[bool]string{false: "untapped", true: "tapped"}[tapped], func(b *testing.B) {
			if tapped {
				a.SetCommitLog(keepNothing{})
				defer a.SetCommitLog(nil)
			}
			b.ReportAllocs()
			for b.Loop() {
				a.PassStarted()
				if _, err := a.Get(ctx, p, state.WithReadOnlyGet()); err != nil {
					b.Fatal(err)
				}
				if err := a.Modify(ctx, o, func(r resource.Resource) error {
					r.(*Pair).TypedSpec().A++
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// keepNothing is a BatchLog that keeps nothing.
type keepNothing struct{}

func (keepNothing) Committed(string, resource.Pointer, uint64, uint64, uint64, *resource.PointerKey) {
}
func (keepNothing) Read(string, uint64, uint32, uint64, resource.KindKey, *resource.PointerKey) {}
func (keepNothing) Took(string, uint64, uint64)                                                 {}

var _ adapter.BatchLog = keepNothing{}
