package resource_test

import (
	"regexp"
	"testing"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
)

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// FuzzLabelQuery checks LabelQueries.Matches, LabelQuery.Matches and
// LabelTerm.Matches against the reference evaluator of the conformance
// package (rule S15) on random labels and unions of queries, and the
// relations between them: a query holds when each of its terms does, a
// union when one of its queries does, and a term of an operation that
// does not compare values disagrees with its inversion.
func FuzzLabelQuery(f *testing.F) {
	for _, s := range conformance.LabelQuerySeeds {
		f.Add(s)
	}
	f.Add([]byte{1, 1, 1, 0, 1, 0})
	f.Add([]byte{2, 1, 2, 2, 0, 4, 1, 0, 1, 2, 0x3, 5, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		c := conformance.DecodeLabelQueryCase(data)
		union := c.Union()
		for _, raw := range c.Labels {
			var l resource.Labels
			for k, v := range raw {
				l.Set(k, v)
			}
			if got, want := union.Matches(l), conformance.ReferenceMatches(raw, union); got != want {
				t.Fatalf("union %s on %v: Matches = %v, reference = %v", union, raw, got, want)
			}
			any := len(union) == 0
			for _, q := range union {
				all := true
				for _, term := range q.Terms {
					tm := term.Matches(l)
					inverted := term
					inverted.Invert = !inverted.Invert
					if term.Op <= resource.LabelOpIn && inverted.Matches(l) == tm {
						t.Fatalf("term %v and its inversion agree on %v", term, raw)
					}
					all = all && tm
				}
				if all != q.Matches(l) {
					t.Fatalf("query %s on %v: Matches = %v, but its terms say %v", q, raw, q.Matches(l), all)
				}
				any = any || all
			}
			if any != union.Matches(l) {
				t.Fatalf("union %s on %v: Matches = %v, but its queries say %v", union, raw, union.Matches(l), any)
			}
		}
	})
}
