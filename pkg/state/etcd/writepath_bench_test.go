package etcd_test

import (
	"context"
	"testing"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
)

// BenchmarkWritePath is the write path without watchers on the test
// server: "update" is one Update of a resource the state created per op
// (E1's second half); "create-update-destroy" is three writes per op.
// Compare builds with benchstat:
//
//	cd pkg/state/etcd && go test -run '^$' -bench WritePath -benchmem -count 10
func BenchmarkWritePath(b *testing.B) {
	ctx := context.Background()
	ns := resource.Namespace("bench")
	b.Run("update", func(b *testing.B) {
		st := newState(b)
		r := conformance.NewIntResource(ns, "a", 0)
		if err := st.Create(ctx, r); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			r.TypedSpec().Value++
			if err := st.Update(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create-update-destroy", func(b *testing.B) {
		st := newState(b)
		b.ReportAllocs()
		for b.Loop() {
			r := conformance.NewIntResource(ns, "a", 0)
			if err := st.Create(ctx, r); err != nil {
				b.Fatal(err)
			}
			r.TypedSpec().Value++
			if err := st.Update(ctx, r); err != nil {
				b.Fatal(err)
			}
			if err := st.Destroy(ctx, r.Metadata()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
