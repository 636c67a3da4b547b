package inmem

import (
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// BenchmarkGetLabelled is a copying Get, and a Modify that changes the
// spec alone, of an owned resource with 8 labels, 8 annotations and 8
// finalizers: what a copy of a stored resource costs when its metadata
// carries more than the identity.
func BenchmarkGetLabelled(b *testing.B) {
	st, ctx := NewState(withoutMutationDetector()), b.Context()
	r := newPair("full", 1)
	md := r.Metadata()
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		md.Labels().Set("label-"+k, "value-"+k)
		md.Annotations().Set("annotation-"+k, "value-"+k)
		md.Finalizers().Add("finalizer-" + k)
	}
	if err := st.Create(ctx, r, state.WithCreateOwner("ctrl")); err != nil {
		b.Fatal(err)
	}
	p := ptr("full")
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.Get(ctx, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("modify-spec", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			if err := st.Modify(ctx, r, func(c resource.Resource) error {
				c.(*pair).TypedSpec().A = n
				return nil
			}, state.WithUpdateOwner("ctrl")); err != nil {
				b.Fatal(err)
			}
		}
	})
}
