package runtime_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// FuzzLabelQueriesCached checks the Runtime's cache against the reference
// evaluator of label-query unions (rule S15): a controller writes the
// resources of a case to a cached kind (read your writes: its List is
// served by the cache) and lists them with the case's queries.
func FuzzLabelQueriesCached(f *testing.F) {
	rts := make(chan controller.Runtime, 1)
	c := &funcController{name: "writer", outputs: []controller.Output{out(typeA, controller.OutputExclusive)},
		run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
			rts <- r
			for {
				select {
				case <-r.EventCh():
				case <-ctx.Done():
					return nil
				}
			}
		}}
	e := runtimetest.Start(f, runtimetest.WithLogger(zap.NewNop()), runtimetest.WithControllers(c),
		runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeA)))
	r := <-rts
	runtimetest.Settle(f, e.Runtime)
	for _, s := range conformance.LabelQuerySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := t.Context()
		cs := conformance.DecodeLabelQueryCase(data)
		old, err := r.List(ctx, kind(typeA), state.WithReadOnlyList())
		if err != nil {
			t.Fatal(err)
		}
		for _, res := range old.Items {
			if err := r.Destroy(ctx, res.Metadata()); err != nil {
				t.Fatal(err)
			}
		}
		var want []string
		union := cs.Union()
		for i, labels := range cs.Labels {
			p := newPair(typeA, "r"+strconv.Itoa(i), i)
			for k, v := range labels {
				p.Metadata().Labels().Set(k, v)
			}
			if err := r.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
			if conformance.ReferenceMatches(labels, union) {
				want = append(want, p.Metadata().ID())
			}
		}
		runtimetest.Settle(t, e.Runtime) // the cache has caught up: the List is the cache's
		var opts []state.ListOption
		for _, q := range cs.Queries {
			opts = append(opts, state.WithLabelQuery(q...))
		}
		l, err := r.List(ctx, kind(typeA), opts...)
		if union.Validate() != nil {
			if !state.IsInvalidError(err) {
				t.Fatalf("union %s has an unusable term: List: %v", union, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, res := range l.Items {
			got = append(got, res.Metadata().ID())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("union %s over %v: List selects %v, the reference %v", union, cs.Labels, got, want)
		}
	})
}
