package cache

import (
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

const benchItems = 100_000

// benchKind returns a ready cached kind of benchItems items, each labelled
// g=g<i mod 1000> (100 items per key), with the "labels" index when indexed.
func benchKind(indexed bool) *Kind {
	c := NewSet([]resource.Kind{itemKind}).Get(resource.KindOf(itemKind))
	if indexed {
		c.AddIndex("labels", byLabels, nil)
	}
	for i := range benchItems {
		r := newItem(fmt.Sprintf("r%06d", i), 1, 1, fmt.Sprintf("g%d", i%1000), "", i)
		c.Apply(&state.Event{Type: state.Created, Resource: r}, r.Metadata())
	}
	c.MarkReady()
	return c
}

// BenchmarkIndex_LookupVsFilteredList100k: the 100 resources of one key
// out of 100k, read-only, by an index lookup and by a List filtered by
// the same label.
func BenchmarkIndex_LookupVsFilteredList100k(b *testing.B) {
	c := benchKind(true)
	b.Run("index", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := c.ListByIndex("labels", "g=g42", state.WithReadOnlyList())
			if err != nil || len(l.Items) != 100 {
				b.Fatal(err, len(l.Items))
			}
		}
	})
	b.Run("filtered-list", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := c.List(state.WithReadOnlyList(), state.WithLabelQuery(resource.LabelEqual("g", "g42")))
			if err != nil || len(l.Items) != 100 {
				b.Fatal(err, len(l.Items))
			}
		}
	})
}

// BenchmarkIndex_MemoryPerEntry reports the heap an index costs per
// indexed resource (one key each), as the difference between a cache of
// 100k resources with the index and one without, in B/entry.
func BenchmarkIndex_MemoryPerEntry(b *testing.B) {
	var perEntry float64
	for b.Loop() {
		plain := heapOf(func() any { return benchKind(false) })
		indexed := heapOf(func() any { return benchKind(true) })
		perEntry = float64(indexed-plain) / benchItems
	}
	b.ReportMetric(perEntry, "B/entry")
}

// BenchmarkIndex_ApplyWithIndex: the cost of keeping the index on a watch
// update that changes the resource's key, against a kind without index.
func BenchmarkIndex_ApplyWithIndex(b *testing.B) {
	for _, indexed := range []bool{false, true} {
		b.Run(fmt.Sprint("indexed=", indexed), func(b *testing.B) {
			c := benchKind(indexed)
			evs := make([]state.Event, 1000)
			for i := range evs {
				r := newItem(fmt.Sprintf("r%06d", i), 1, 2+uint64(i), fmt.Sprintf("g%d", (i+1)%1000), "", i)
				evs[i] = state.Event{Type: state.Updated, Resource: r}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				ev := &evs[i%len(evs)]
				c.Apply(ev, ev.Resource.Metadata())
				i++
			}
		})
	}
}

// heapOf returns the live heap that build's result holds.
func heapOf(build func() any) uint64 {
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	v := build()
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	goruntime.KeepAlive(v)
	return after.HeapAlloc - before.HeapAlloc
}
