package resource_test

import (
	"regexp"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
)

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// fuzzAlphabet keeps keys and values short, so that random inputs often hit
// present keys and equal values.
var fuzzAlphabet = []string{"", "a", "b", "c"}

// decodeQuery turns fuzz bytes into labels and a label query: the first
// byte is the number of labels, each label takes two bytes (key, value);
// every following group of three bytes is a term (op+invert, key, value
// set as a bit mask over the alphabet).
func decodeQuery(data []byte) (map[string]string, []resource.LabelQueryOption) {
	pick := func(b byte) string { return fuzzAlphabet[int(b)%len(fuzzAlphabet)] }
	raw := map[string]string{}
	if len(data) == 0 {
		return raw, nil
	}
	n := int(data[0] % 5)
	data = data[1:]
	for i := 0; i < n && len(data) >= 2; i++ {
		raw[pick(data[0])] = pick(data[1])
		data = data[2:]
	}
	var opts []resource.LabelQueryOption
	for len(data) >= 3 {
		op, key, mask := data[0], pick(data[1]), data[2]
		data = data[3:]
		var termOpts []resource.TermOption
		if op&4 != 0 {
			termOpts = append(termOpts, resource.NotMatches)
		}
		switch op % 3 {
		case 0:
			opts = append(opts, resource.LabelExists(key, termOpts...))
		case 1:
			opts = append(opts, resource.LabelEqual(key, pick(mask), termOpts...))
		case 2:
			var values []string
			for i, v := range fuzzAlphabet {
				if mask&(1<<i) != 0 {
					values = append(values, v)
				}
			}
			opts = append(opts, resource.LabelIn(key, values, termOpts...))
		}
	}
	return raw, opts
}

// referenceMatches evaluates a query the obvious way, from the terms'
// definitions, over a plain map.
func referenceMatches(raw map[string]string, q resource.LabelQuery) bool {
	for _, term := range q.Terms {
		value, present := raw[term.Key]
		var matched bool
		switch term.Op {
		case resource.LabelOpExists:
			matched = present
		case resource.LabelOpEqual:
			matched = present && len(term.Value) == 1 && value == term.Value[0]
		case resource.LabelOpIn:
			for _, v := range term.Value {
				if present && v == value {
					matched = true
				}
			}
		}
		if term.Invert {
			matched = !matched
		}
		if !matched {
			return false
		}
	}
	return true
}

func FuzzLabelQuery(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 0, 1, 0})
	f.Add([]byte{2, 1, 2, 2, 0, 4, 1, 0, 1, 2, 0x3, 5, 2, 1})
	f.Add([]byte{0, 4, 0, 0, 5, 1, 1, 6, 2, 0xff})
	f.Add([]byte{3, 0, 0, 1, 1, 2, 2, 1, 0, 0, 2, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, opts := decodeQuery(data)
		var l resource.Labels
		for k, v := range raw {
			l.Set(k, v)
		}
		q := resource.NewLabelQuery(opts...)
		if got, want := q.Matches(l), referenceMatches(raw, q); got != want {
			t.Fatalf("query %v on %v: Matches = %v, reference = %v", q.Terms, raw, got, want)
		}
		// A query matches exactly when each of its terms does.
		all := true
		for _, term := range q.Terms {
			tm := term.Matches(l)
			inverted := term
			inverted.Invert = !inverted.Invert
			if inverted.Matches(l) == tm {
				t.Fatalf("term %v and its inversion agree on %v", term, raw)
			}
			all = all && tm
		}
		if all != q.Matches(l) {
			t.Fatalf("query %v on %v: Matches = %v, but its terms say %v", q.Terms, raw, q.Matches(l), all)
		}
	})
}
