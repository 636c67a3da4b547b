package etcd_test

import (
	"testing"

	"github.com/resgraph/resgraph/conformance"
)

// FuzzLabelQueries checks the etcd state's List and WatchKind, on the
// test's real etcd server, against the reference evaluator of label-query
// unions (rule S15).
func FuzzLabelQueries(f *testing.F) {
	st := newState(f)
	for _, s := range conformance.LabelQuerySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) { conformance.LabelQueryFuzzer(t, st, data) })
}
