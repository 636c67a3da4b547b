package telemetry

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/internal/outcome"
	"github.com/resgraph/resgraph/pkg/runtime/internal/work"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newEngine(traceSize int) *Engine {
	return &Engine{Clock: NewClock(), Ring: trace.NewRing(traceSize), Metrics: true}
}

func changed() (*resource.Metadata, []state.Event, []*resource.Metadata) {
	m := resource.NewMetadata("ns", "T", "id", resource.VersionUndefined)
	md := &m
	md.SetUpdated(time.Now())
	return md, []state.Event{{Type: state.Updated}}, []*resource.Metadata{md}
}

// TestObservationsDoNotAllocate: with metrics and the trace on, a routed
// change, a QController item's start and end, and a Controller's wake-up,
// pass start and end record their histograms, busy time and trace records
// without allocating.
func TestObservationsDoNotAllocate(t *testing.T) {
	eng := newEngine(trace.DefaultSize)
	md, evs, metas := changed()
	k := NewKind()
	q := NewController(eng, "q", 1)
	c := NewController(eng, "c", 1)
	it := work.Reconcile(resource.PointerOf(md))
	d := outcome.Decide(outcome.Reconcile, outcome.Success())
	allocs := testing.AllocsPerRun(1000, func() {
		var b Batch
		k.Routed(evs, metas, false, &b)
		q.Queued(state.Updated, md, &b)
		var p Pending // the note of the item's queue entry
		p.Queued(state.Updated, md, q.Now(&b), &b)
		s := q.ItemStarted(it, &p, 0)
		q.ItemEnded(it, s, q.Now(nil), outcome.Success(), d, 0, 0)
		c.Woken(state.Updated, md, &b)
		c.EventTaken(false)
		c.CallEnded(OpModify, md, nil)
		c.PassEnded(false)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per observation round, want 0", allocs)
	}
	if n := q.Latencies().QueueWait.Count; n < 1000 {
		t.Fatalf("queue wait observed %d times", n)
	}
}

// TestAQControllersCallsKeepNoLastCall: the end of a runtime call is kept
// for a Controller, whose pass's busy time ends with its last call
// (EventTaken), and not for a QController, whose busy time is its items'
// (ItemEnded): its workers' calls do not read the clock for it nor write
// the line they share, and its Get reads no clock at all. Its writes are
// traced as before.
func TestAQControllersCallsKeepNoLastCall(t *testing.T) {
	eng := newEngine(trace.DefaultSize)
	eng.Clock = &Clock{epoch: time.Now().Add(-time.Hour)} // every reading is past an hour
	md, _, _ := changed()
	ptr := resource.PointerOf(md)
	q, c := NewQController(eng, "q", 4), NewController(eng, "c", 1)
	for _, s := range []*Controller{q, c} {
		s.CallEnded(OpGet, ptr, nil)
	}
	if q.lastCall.Load() != 0 {
		t.Fatal("a QController's Get kept the end of its call")
	}
	if c.lastCall.Load() < int64(time.Hour) {
		t.Fatal("a Controller's Get did not keep the end of its call")
	}
	mark := eng.Ring.Last()
	q.WriteEnded(OpModify, md, 2, nil)
	if q.lastCall.Load() != 0 {
		t.Fatal("a QController's write kept the end of its call")
	}
	recs, _ := eng.Ring.Since(mark, nil)
	if len(recs) != 1 || recs[0].Type != trace.Commit || recs[0].Worker != 2 || recs[0].Controller != "q" {
		t.Fatalf("a QController's write traced as %+v, want one commit by worker 2", recs)
	}
}

// TestNilSinkIsOff: a Runtime with neither metrics nor a trace has nil
// sinks, whose methods do nothing.
func TestNilSinkIsOff(t *testing.T) {
	c := NewController(&Engine{Clock: NewClock()}, "c", 1)
	if c != nil {
		t.Fatal("a sink for a Runtime with metrics and trace off")
	}
	md, _, _ := changed()
	c.Woken(state.Updated, md, nil)
	c.EventTaken(true)
	c.PassEnded(false)
	if c.Counters() != (Counters{}) || c.Latencies().QueueWait.Count != 0 {
		t.Fatal("a nil sink counted")
	}
}

// BenchmarkItem is a QController item's telemetry: routed, started, ended
// (the pending work noted as the queue's entry would hold it).
func BenchmarkItem(b *testing.B) {
	for _, size := range []int{0, trace.DefaultSize} {
		name := "trace=off"
		if size > 0 {
			name = "trace=on"
		}
		b.Run(name, func(b *testing.B) {
			eng := newEngine(size)
			md, _, _ := changed()
			q := NewController(eng, "q", 1)
			it := work.Reconcile(resource.PointerOf(md))
			d := outcome.Decide(outcome.Reconcile, outcome.Success())
			b.ReportAllocs()
			for b.Loop() {
				q.Queued(state.Updated, md, nil)
				var p Pending
				p.Queued(state.Updated, md, q.Now(nil), nil)
				s := q.ItemStarted(it, &p, 0)
				q.ItemEnded(it, s, q.Now(nil), outcome.Success(), d, 0, 0)
			}
		})
	}
}

// BenchmarkPass is a Controller pass's telemetry: woken, taken, a write,
// ended.
func BenchmarkPass(b *testing.B) {
	for _, size := range []int{0, trace.DefaultSize} {
		name := "trace=off"
		if size > 0 {
			name = "trace=on"
		}
		b.Run(name, func(b *testing.B) {
			eng := newEngine(size)
			md, _, _ := changed()
			c := NewController(eng, "c", 1)
			b.ReportAllocs()
			for b.Loop() {
				c.Woken(state.Updated, md, nil)
				c.EventTaken(false)
				c.CallEnded(OpModify, md, nil)
				c.PassEnded(false)
			}
		})
	}
}
