package boltdb_test

import (
	"path/filepath"
	"testing"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// FuzzLabelQueries checks the persistent state's List and WatchKind
// against the reference evaluator of label-query unions (rule S15).
func FuzzLabelQueries(f *testing.F) {
	st, err := boltdb.Open(filepath.Join(f.TempDir(), "state.db"), registry())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = st.Close() })
	for _, s := range conformance.LabelQuerySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { conformance.LabelQueryFuzzer(t, st, data) })
}
