package remote_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

const benchNS = "bench"

// BenchmarkGet measures one Get over a unix socket: a round trip.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	st, d := served(b, "unix")
	if err := d.State.Create(ctx, conformance.NewIntResource(benchNS, "a", 1)); err != nil {
		b.Fatal(err)
	}
	ptr := resource.NewPointer(benchNS, conformance.IntResourceType, "a")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Get(ctx, ptr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate measures one Update over a unix socket.
func BenchmarkUpdate(b *testing.B) {
	ctx := context.Background()
	st, _ := served(b, "unix")
	r := conformance.NewIntResource(benchNS, "a", 0)
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
}

// BenchmarkList measures a List of 10k resources over a unix socket; it
// reports the allocations and bytes per listed resource.
func BenchmarkList(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	st, d := served(b, "unix", inmem.WithMutationDetector(func(error) {}))
	for i := range n {
		if err := d.State.Create(ctx, conformance.NewIntResource(benchNS, fmt.Sprintf("r%05d", i), i)); err != nil {
			b.Fatal(err)
		}
	}
	kind := resource.NewKind(benchNS, conformance.IntResourceType)
	b.ReportAllocs()
	for b.Loop() {
		l, err := st.List(ctx, kind)
		if err != nil || len(l.Items) != n {
			b.Fatal(err, len(l.Items))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/item")
}

// BenchmarkWatchEvent measures the delivery of one change to a remote
// kind watcher (the writer writes on the server's state directly); run
// with -benchmem, allocs/op is the allocations per event of both sides.
func BenchmarkWatchEvent(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, d := served(b, "unix", inmem.WithMutationDetector(func(error) {}))
	kind := resource.NewKind(benchNS, conformance.IntResourceType)
	ch := make(chan state.Event, 64)
	if err := st.WatchKind(ctx, kind, ch); err != nil {
		b.Fatal(err)
	}
	r := conformance.NewIntResource(benchNS, "a", 0)
	if err := d.State.Create(ctx, r); err != nil {
		b.Fatal(err)
	}
	<-ch
	b.ReportAllocs()
	for b.Loop() {
		r.TypedSpec().Value++
		if err := d.State.Update(ctx, r); err != nil {
			b.Fatal(err)
		}
		<-ch
	}
}

// BenchmarkWatchFanOut measures the delivery of one change to 16 remote
// kind watchers, each on a connection of its own (the writer writes on
// the server's state directly).
func BenchmarkWatchFanOut(b *testing.B) {
	const watchers = 16
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, d := served(b, "unix", inmem.WithMutationDetector(func(error) {}))
	kind := resource.NewKind(benchNS, conformance.IntResourceType)
	chs := make([]chan state.Event, watchers)
	for i := range chs {
		chs[i] = make(chan state.Event, 64)
		if err := client(b, d.Addr).WatchKind(ctx, kind, chs[i]); err != nil {
			b.Fatal(err)
		}
	}
	r := conformance.NewIntResource(benchNS, "a", 0)
	if err := d.State.Create(ctx, r); err != nil {
		b.Fatal(err)
	}
	for _, ch := range chs {
		<-ch
	}
	b.ReportAllocs()
	for b.Loop() {
		r.TypedSpec().Value++
		if err := d.State.Update(ctx, r); err != nil {
			b.Fatal(err)
		}
		for _, ch := range chs {
			<-ch
		}
	}
}
