package inmem_test

import (
	"testing"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// FuzzLabelQueries checks inmem's List and WatchKind against the
// reference evaluator of label-query unions (rule S15).
func FuzzLabelQueries(f *testing.F) {
	st := inmem.NewState()
	for _, s := range conformance.LabelQuerySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { conformance.LabelQueryFuzzer(t, st, data) })
}
