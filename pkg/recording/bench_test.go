package recording_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// BenchmarkW1Recorder is W1 of BENCHMARKS.md (create 10k resources, then
// update each once; no other watcher) without and with a recorder of the
// kind: what recording costs the writer. The recorder is started (and
// has read the state) before the timer, and stopped after it.
//
// Three more modes measure what any recorder of W1 must pay (docs/
// performance.md, the recorder's floor): "tap", a commit tap that keeps
// nothing (the state's call of a tap); "floor", a commit tap that keeps
// each create's version in a slice made before the run (what the
// recording must keep and, once its update replaced it, only the
// recording holds); and "log", a commit tap that writes each change's
// resource, revision and time in 16 bytes, in chunks of 508 allocated as
// it goes (a commit log with no recorder to read it; its resources keep
// the creates' versions). Each mode reports the collector's cycles and
// its mark phases' CPU time a run.
func BenchmarkW1Recorder(b *testing.B) {
	const n = 10_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%06d", i)
	}
	for _, mode := range []string{"off", "on", "tap", "floor", "log"} {
		b.Run("recorder="+mode, func(b *testing.B) {
			b.ReportAllocs()
			var gc gcWork
			for b.Loop() {
				b.StopTimer()
				st := inmem.NewState()
				stop := startW1Mode(b, st, mode, n)
				gc.start()
				b.StartTimer()
				w1(b, st, ids)
				b.StopTimer()
				gc.stop()
				stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(2*n*b.N)/b.Elapsed().Seconds(), "writes/s")
			gc.report(b)
		})
	}
}

// startW1Mode sets mode's recorder or tap on st (n: W1's resources) and
// returns what stops it.
func startW1Mode(b testing.TB, st state.State, mode string, n int) func() {
	switch mode {
	case "on":
		return runRecorder(b, st)
	case "tap", "floor", "log":
		k := &keepCreates{on: mode == "floor", log: mode == "log"}
		if k.on {
			k.kept = make([]resource.Resource, 0, n)
		}
		remove, err := st.(kindtap.Tapper).TapKind(noteKind, k)
		if err != nil {
			b.Fatal(err)
		}
		return func() {
			remove()
			if k.on && len(k.kept) != n {
				b.Fatalf("the floor kept %d creates, want %d", len(k.kept), n)
			}
			if k.log && k.logged() != 2*n {
				b.Fatalf("the log wrote %d changes, want %d", k.logged(), 2*n)
			}
		}
	}
	return func() {}
}

// keepCreates is the floor's tap: it keeps each create's version (on),
// or writes each change in 16 bytes (log: its resource's data word, and
// its revision and time, as a commit log does; the log keeps the creates'
// versions), or keeps nothing.
type keepCreates struct {
	on, log bool
	kept    []resource.Resource
	chunk   *[508]loggedChange
	used    int
	chunks  []*[508]loggedChange
}

type loggedChange struct {
	data unsafe.Pointer
	bits uint64
}

// logged returns how many changes the log wrote.
func (k *keepCreates) logged() int {
	if len(k.chunks) == 0 {
		return 0
	}
	return (len(k.chunks)-1)*len(k.chunk) + k.used
}

func (k *keepCreates) Committed(rev uint64, old, cur resource.Resource, at int64) {
	if k.on && old == nil {
		k.kept = append(k.kept, cur)
	}
	if !k.log {
		return
	}
	res := cur
	if res == nil {
		res = old
	}
	if k.chunk == nil || k.used == len(k.chunk) {
		k.chunk, k.used = new([508]loggedChange), 0
		k.chunks = append(k.chunks, k.chunk)
	}
	k.chunk[k.used] = loggedChange{data: (*[2]unsafe.Pointer)(unsafe.Pointer(&res))[1], bits: rev<<38 ^ uint64(at)}
	k.used++
}

// gcWork sums the collector's cycles and mark CPU time over the timed
// parts of a benchmark's runs (runtime/metrics; the mark time is the
// runtime's estimate, updated at each cycle's end).
type gcWork struct {
	s            [2]metrics.Sample
	cycles, mark float64
}

func (g *gcWork) read() (float64, float64) {
	g.s[0].Name, g.s[1].Name = "/gc/cycles/total:gc-cycles", "/cpu/classes/gc/mark/assist:cpu-seconds"
	metrics.Read(g.s[:1])
	c := float64(g.s[0].Value.Uint64())
	var m float64
	for _, name := range []string{"/cpu/classes/gc/mark/assist:cpu-seconds", "/cpu/classes/gc/mark/dedicated:cpu-seconds", "/cpu/classes/gc/mark/idle:cpu-seconds"} {
		g.s[1].Name = name
		metrics.Read(g.s[1:])
		m += g.s[1].Value.Float64()
	}
	return c, m
}

func (g *gcWork) start() {
	c, m := g.read()
	g.cycles, g.mark = g.cycles-c, g.mark-m
}

func (g *gcWork) stop() {
	c, m := g.read()
	g.cycles, g.mark = g.cycles+c, g.mark+m
}

func (g *gcWork) report(b *testing.B) {
	b.ReportMetric(g.cycles/float64(b.N), "gc/op")
	b.ReportMetric(g.mark*1e6/float64(b.N), "gc-mark-µs/op")
}

func w1(b testing.TB, st state.State, ids []string) {
	ctx := context.Background()
	notes := make([]*Note, len(ids))
	for i, id := range ids {
		notes[i] = newNote(id, i)
		if err := st.Create(ctx, notes[i]); err != nil {
			b.Fatal(err)
		}
	}
	for i, n := range notes {
		n.TypedSpec().N = i + 1
		if err := st.Update(ctx, n); err != nil {
			b.Fatal(err)
		}
	}
}

// runRecorder runs a recorder of the notes of st until the returned stop,
// once it read the state.
func runRecorder(b testing.TB, st state.State) func() {
	rec, err := recording.New(st, registry(b), recording.WithKinds(noteKind))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	<-rec.Started()
	return func() {
		cancel()
		<-done
	}
}

var _ resource.Resource = (*Note)(nil)
