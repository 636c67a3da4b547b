package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// LabelQueryCase is a case of the label-query fuzz targets (rule S15):
// the labels of a few resources and a union of label queries, decoded from
// fuzz bytes by [DecodeLabelQueryCase].
type LabelQueryCase struct {
	// Labels holds the labels of the resource "r<i>" at index i.
	Labels []map[string]string
	// Queries are the queries of the union, one option list per
	// WithLabelQuery.
	Queries [][]resource.LabelQueryOption
}

// fuzzKeys and fuzzValues keep keys and values few and short, so that
// random inputs often hit present keys, equal values and integers.
var (
	fuzzKeys   = []string{"a", "b", "n", ""}
	fuzzValues = []string{"", "a", "b", "1", "2", "10", "-3", "x1"}
)

// DecodeLabelQueryCase turns fuzz bytes into a case: the first byte is
// the number of resources (up to 5); each resource takes a byte, its
// number of labels (up to 3), then two bytes per label (key, value); every
// following group of three bytes is a term (operation, inversion and "a
// new query starts here" in the first byte; the key; the value, or for
// LabelIn a bit mask over the values).
func DecodeLabelQueryCase(data []byte) LabelQueryCase {
	var c LabelQueryCase
	take := func() (byte, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return b, true
	}
	n, _ := take()
	for range int(n % 6) {
		m, _ := take()
		labels := map[string]string{}
		for range int(m % 4) {
			k, _ := take()
			v, _ := take()
			labels[fuzzKeys[int(k)%len(fuzzKeys)]] = fuzzValues[int(v)%len(fuzzValues)]
		}
		delete(labels, "")
		c.Labels = append(c.Labels, labels)
	}
	for len(data) >= 3 {
		op, key, val := data[0], fuzzKeys[int(data[1])%len(fuzzKeys)], data[2]
		data = data[3:]
		if op&0x10 != 0 || len(c.Queries) == 0 {
			c.Queries = append(c.Queries, nil)
		}
		last := &c.Queries[len(c.Queries)-1]
		*last = append(*last, fuzzTerm(op, key, val))
	}
	return c
}

// fuzzTerm builds the term of op (operation in its low 3 bits, inversion
// in bit 3) on key with the value val picks.
func fuzzTerm(op byte, key string, val byte) resource.LabelQueryOption {
	var opts []resource.TermOption
	if op&8 != 0 {
		opts = append(opts, resource.NotMatches)
	}
	value := fuzzValues[int(val)%len(fuzzValues)]
	switch op & 7 % 7 {
	case 0:
		return resource.LabelExists(key, opts...)
	case 1:
		return resource.LabelEqual(key, value, opts...)
	case 2:
		var values []string
		for i, v := range fuzzValues {
			if val&(1<<i) != 0 {
				values = append(values, v)
			}
		}
		return resource.LabelIn(key, values, opts...)
	case 3:
		return resource.LabelLT(key, value, opts...)
	case 4:
		return resource.LabelLTE(key, value, opts...)
	case 5:
		return resource.LabelLTNumeric(key, value, opts...)
	default:
		return resource.LabelLTENumeric(key, value, opts...)
	}
}

// Union returns the queries of the case as a resource.LabelQueries.
func (c LabelQueryCase) Union() resource.LabelQueries {
	qs := make(resource.LabelQueries, 0, len(c.Queries))
	for _, opts := range c.Queries {
		qs = append(qs, resource.NewLabelQuery(opts...))
	}
	return qs
}

// ReferenceMatches evaluates a union of label queries over plain labels
// from the definitions of rule S15 and of the term operations, written
// independently of the package's evaluation: no query selects
// everything; otherwise a resource matches when every term of some query
// holds. An ordering term never holds for a missing key or, numeric, a
// value that is not an integer, inverted or not.
func ReferenceMatches(labels map[string]string, union resource.LabelQueries) bool {
	if len(union) == 0 {
		return true
	}
	for _, q := range union {
		all := true
		for _, t := range q.Terms {
			all = all && referenceTerm(labels, t)
		}
		if all {
			return true
		}
	}
	return false
}

func referenceTerm(labels map[string]string, t resource.LabelTerm) bool {
	v, present := labels[t.Key]
	want := ""
	if len(t.Value) > 0 {
		want = t.Value[0]
	}
	switch t.Op {
	case resource.LabelOpExists:
		return present != t.Invert
	case resource.LabelOpEqual:
		return (present && len(t.Value) == 1 && v == want) != t.Invert
	case resource.LabelOpIn:
		return (present && slices.Contains(t.Value, v)) != t.Invert
	case resource.LabelOpLT, resource.LabelOpLTE:
		if !present {
			return false
		}
		less := v < want || (t.Op == resource.LabelOpLTE && v == want)
		return less != t.Invert
	case resource.LabelOpLTNumeric, resource.LabelOpLTENumeric:
		a, errA := strconv.ParseInt(v, 10, 64)
		b, errB := strconv.ParseInt(want, 10, 64)
		if !present || errA != nil || errB != nil {
			return false
		}
		less := a < b || (t.Op == resource.LabelOpLTENumeric && a == b)
		return less != t.Invert
	}
	return false
}

// LabelQuerySeeds are seed inputs of the label-query fuzz targets: two
// queries that select different resources, ordering and numeric terms, an
// inverted numeric range, an empty key.
var LabelQuerySeeds = [][]byte{
	{},
	{3, 1, 0, 1, 1, 0, 2, 1, 0, 3, 0x01, 0, 1, 0x11, 0, 2},
	{4, 1, 2, 3, 1, 2, 5, 1, 2, 4, 0, 0x05, 2, 4, 0x0d, 2, 3},
	{2, 2, 0, 1, 2, 6, 1, 2, 4, 0x03, 0, 2, 0x14, 2, 5, 0x06, 2, 7},
	{1, 1, 3, 1, 0x01, 3, 1},
}

// fuzzNS makes the namespace of every fuzz case unique in the process.
var fuzzNS atomic.Int64

// LabelQueryFuzzer checks, for one fuzz case, a backend's evaluation of a
// union of label queries against [ReferenceMatches]: List, and WatchKind's
// bootstrap contents, select exactly the resources the reference selects;
// a union with an unusable term is refused by both with an invalid-class
// error. A fuzz target of the backend calls it from f.Fuzz:
//
//	func FuzzLabelQueries(f *testing.F) {
//		st := inmem.NewState()
//		for _, s := range conformance.LabelQuerySeeds {
//			f.Add(s)
//		}
//		f.Fuzz(func(t *testing.T, data []byte) { conformance.LabelQueryFuzzer(t, st, data) })
//	}
//
// Each case works in a namespace of its own, so one state serves them all.
func LabelQueryFuzzer(t *testing.T, st state.State, data []byte) {
	t.Helper()
	c := DecodeLabelQueryCase(data)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ns := fmt.Sprintf("fuzz-labelquery-%d", fuzzNS.Add(1))
	kind := resource.NewKind(ns, IntResourceType)
	for i, labels := range c.Labels {
		r := NewIntResource(ns, "r"+strconv.Itoa(i), i)
		for k, v := range labels {
			r.Metadata().Labels().Set(k, v)
		}
		if err := st.Create(ctx, r); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	union := c.Union()
	var want []string
	for i, labels := range c.Labels {
		if ReferenceMatches(labels, union) {
			want = append(want, "r"+strconv.Itoa(i))
		}
	}
	var listOpts []state.ListOption
	var watchOpts []state.WatchKindOption
	for _, q := range c.Queries {
		listOpts = append(listOpts, state.WithLabelQuery(q...))
		watchOpts = append(watchOpts, state.WatchWithLabelQuery(q...))
	}
	list, err := st.List(ctx, kind, listOpts...)
	ch := make(chan state.Event, len(c.Labels)+1)
	werr := st.WatchKind(ctx, kind, ch, append(watchOpts, state.WithBootstrapContents(true))...)
	if union.Validate() != nil {
		if !state.IsInvalidError(err) || !state.IsInvalidError(werr) || len(list.Items) != 0 {
			t.Fatalf("union %s has an unusable term: List = %d items, %v; WatchKind: %v", union, len(list.Items), err, werr)
		}
		return
	}
	if err != nil || werr != nil {
		t.Fatalf("union %s: List: %v; WatchKind: %v", union, err, werr)
	}
	got := make([]string, 0, len(list.Items))
	for _, r := range list.Items {
		got = append(got, r.Metadata().ID())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("union %s over %v: List selects %v, the reference %v", union, c.Labels, got, want)
	}
	if boot := bootstrapped(ctx, t, ch); !slices.Equal(boot, want) {
		t.Fatalf("union %s over %v: WatchKind bootstraps %v, the reference %v", union, c.Labels, boot, want)
	}
}

// bootstrapped receives the Created events up to Bootstrapped and returns
// their IDs, in ID order.
func bootstrapped(ctx context.Context, t *testing.T, ch <-chan state.Event) []string {
	var ids []string
	for {
		select {
		case ev := <-ch:
			if ev.Type == state.Bootstrapped {
				slices.Sort(ids)
				return ids
			}
			if ev.Type != state.Created {
				t.Fatalf("bootstrap event %s", eventString(ev))
			}
			ids = append(ids, ev.Resource.Metadata().ID())
		case <-ctx.Done():
			t.Fatalf("no Bootstrapped event within %s", testTimeout)
		}
	}
}
