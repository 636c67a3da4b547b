package runtimetest

import (
	"context"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
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
