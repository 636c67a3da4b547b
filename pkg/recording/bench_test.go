package recording_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// BenchmarkW1Recorder is W1 of BENCHMARKS.md (create 10k resources, then
// update each once; no other watcher) without and with a recorder of the
// kind: what recording costs the writer. The recorder is started (and
// has read the state) before the timer, and stopped after it.
func BenchmarkW1Recorder(b *testing.B) {
	const n = 10_000
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("r%06d", i)
	}
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("recorder=%s", map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				st := inmem.NewState()
				stop := func() {}
				if on {
					stop = runRecorder(b, st)
				}
				b.StartTimer()
				w1(b, st, ids)
				b.StopTimer()
				stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(2*n*b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

func w1(b *testing.B, st state.State, ids []string) {
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
func runRecorder(b *testing.B, st state.State) func() {
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
