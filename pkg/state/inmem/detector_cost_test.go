package inmem

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// payloadSpec is the spec of issue 19's reproduction: a byte payload and
// the resource's index.
type payloadSpec struct {
	Payload []byte
	N       int
}

type payloadDef struct{}

func (payloadDef) Definition() typed.Definition {
	return typed.Definition{Type: "Payloads.test.resgraph.dev", DefaultNamespace: testNS}
}

type payload = typed.Resource[payloadSpec, payloadDef]

var payloadKind = resource.NewKind(testNS, "Payloads.test.resgraph.dev")

func newPayload(i, size int) *payload {
	return typed.New[payloadSpec, payloadDef](resource.NewMetadata(testNS, payloadKind.Type(), fmt.Sprintf("res-%05d", i), resource.VersionUndefined),
		payloadSpec{Payload: make([]byte, size), N: i})
}

// stalledWorkload is the reproduction of issue 19 (point 1), with its
// sizes as parameters: resources resources whose spec holds a payload of
// size bytes, writers writers updating each of their share of the
// resources rounds times (each update changes the first bytes of the
// payload), one kind watcher that never reads its channel and one that
// drains it until it has seen every final version.
type stalledWorkload struct {
	resources, size, writers, rounds int
}

// issue19 is the reproduction's size: 1,000 resources of 512 bytes, 4
// writers, 200 updates each (200,000 updates).
var issue19 = stalledWorkload{resources: 1000, size: 512, writers: 4, rounds: 200}

// run creates the resources, starts the watchers, runs the writers and
// waits for the draining watcher to see every final version. It returns
// the time the writes took (from the first update to the last one's
// return) and the CPU time the process used meanwhile. The state is st.
func (w stalledWorkload) run(tb testing.TB, st state.State) (took, cpu time.Duration) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rs := make([]*payload, w.resources)
	for i := range rs {
		rs[i] = newPayload(i, w.size)
		require.NoError(tb, st.Create(ctx, rs[i]))
	}
	// The stalled watcher: nobody ever reads its channel.
	require.NoError(tb, st.WatchKind(ctx, payloadKind, make(chan state.Event)))
	keeping := make(chan state.Event, benchWatchBuffer)
	require.NoError(tb, st.WatchKind(ctx, payloadKind, keeping))
	final := uint64(1 + w.rounds)
	done := make(chan struct{})
	var drain sync.WaitGroup
	drain.Go(func() { payloadWatcher(ctx, keeping, w.resources, final, done) })

	start, cpuStart := time.Now(), cpuTime()
	var writers sync.WaitGroup
	errs := make(chan error, w.writers)
	for k := range w.writers {
		writers.Go(func() {
			for round := range w.rounds {
				for i := k; i < len(rs); i += w.writers {
					r := rs[i]
					binary.LittleEndian.PutUint64(r.TypedSpec().Payload, uint64(round+1))
					if err := st.Update(ctx, r); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	writers.Wait()
	took, cpu = time.Since(start), cpuTime()-cpuStart
	close(errs)
	for err := range errs {
		require.NoError(tb, err)
	}
	select {
	case <-done:
	case <-time.After(testTimeout):
		require.FailNow(tb, "the draining watcher did not see every final version")
	}
	cancel()
	drain.Wait()
	return took, cpu
}

// cpuTime returns the CPU time (user and system) the process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// payloadWatcher drains a kind watch and closes done once it has seen every
// one of n resources (by spec N) at version final.
func payloadWatcher(ctx context.Context, ch <-chan state.Event, n int, final uint64, done chan<- struct{}) {
	seen := make([]bool, n)
	reached := 0
	for {
		ev, ok := receive(ctx, ch)
		if !ok {
			return
		}
		if ev.Type != state.Updated || version(ev.Resource) != final {
			continue
		}
		if i := ev.Resource.(*payload).TypedSpec().N; !seen[i] {
			seen[i] = true
			if reached++; reached == n {
				close(done)
			}
		}
	}
}

// TestS7_DetectorIssue19Reproduction is issue 19's reproduction with the
// detector on: 200,000 updates of 512-byte payloads with a stalled and a
// draining kind watcher complete (under -race too), and nothing is
// reported since nothing mutates a snapshot.
func TestS7_DetectorIssue19Reproduction(t *testing.T) {
	st, rep := detectorState(t)
	took, cpu := issue19.run(t, st)
	t.Logf("%d updates in %v (CPU %v)", issue19.resources*issue19.rounds, took, cpu)
	require.Empty(t, rep.take(t))
}

// BenchmarkDetectorIssue19 is issue 19's reproduction with the detector
// off and on; one iteration is the whole workload on a fresh state.
// write-ns is the time the writers took per update, cpu-ns the CPU time
// the process used meanwhile per update (the watchers' and the
// collector's included), which a busy machine disturbs less.
func BenchmarkDetectorIssue19(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("detector=%t", on), func(b *testing.B) {
			var took, cpu time.Duration
			for b.Loop() {
				st := newBenchState()
				if on {
					st = NewState(WithMutationDetector(nil))
				}
				t, c := issue19.run(b, st)
				took, cpu = took+t, cpu+c
			}
			writes := float64(b.N * issue19.resources * issue19.rounds)
			b.ReportMetric(float64(took.Nanoseconds())/writes, "write-ns")
			b.ReportMetric(float64(cpu.Nanoseconds())/writes, "cpu-ns")
		})
	}
}

// The spec shapes of the per-write benchmark.
type (
	// arraySpec is a plain-value spec copied by assignment.
	arraySpec struct {
		Data [4096]byte
		N    int
	}
	// mixedSpec holds strings, a map, a slice of structs with padding and
	// a pointer.
	mixedSpec struct {
		Name   string
		Addrs  []string
		Labels map[string]string
		Routes []route
		Next   *route
		N      int
	}
	route struct {
		Up     bool
		Metric int64
		Dst    string
	}
)

type shapeDef struct{}

func (shapeDef) Definition() typed.Definition {
	return typed.Definition{Type: "Shapes.test.resgraph.dev", DefaultNamespace: testNS}
}

// writeShape is a spec shape of the per-write benchmark: how to make
// resource i and how to change it before a write.
type writeShape struct {
	name   string
	make   func(i int) resource.Resource
	change func(r resource.Resource, n int)
}

func shapeResource[S any](i int, spec S) *typed.Resource[S, shapeDef] {
	return typed.New[S, shapeDef](resource.NewMetadata(testNS, "Shapes.test.resgraph.dev", fmt.Sprintf("res-%05d", i), resource.VersionUndefined), spec)
}

func payloadShape(size int) writeShape {
	return writeShape{
		name: fmt.Sprintf("bytes=%d", size),
		make: func(i int) resource.Resource { return shapeResource(i, payloadSpec{Payload: make([]byte, size), N: i}) },
		change: func(r resource.Resource, n int) {
			binary.LittleEndian.PutUint64(r.(*typed.Resource[payloadSpec, shapeDef]).TypedSpec().Payload, uint64(n))
		},
	}
}

var writeShapes = []writeShape{
	{
		name:   "pair",
		make:   func(i int) resource.Resource { return shapeResource(i, pairSpec{B: i}) },
		change: func(r resource.Resource, n int) { r.(*typed.Resource[pairSpec, shapeDef]).TypedSpec().A = n },
	},
	payloadShape(512),
	payloadShape(64 << 10),
	{
		name: "array=4096",
		make: func(i int) resource.Resource { return shapeResource(i, arraySpec{N: i}) },
		change: func(r resource.Resource, n int) {
			r.(*typed.Resource[arraySpec, shapeDef]).TypedSpec().Data[100] = byte(n)
		},
	},
	{
		name: "mixed",
		make: func(i int) resource.Resource {
			s := mixedSpec{
				Name:   fmt.Sprintf("link-%d", i),
				Addrs:  []string{"10.0.0.1/24", "10.0.0.2/24", "fe80::1/64"},
				Labels: map[string]string{"zone": "a", "tier": "web", "rack": "r1", "row": "7"},
				Next:   &route{Dst: "default"},
				N:      i,
			}
			for k := range 16 {
				s.Routes = append(s.Routes, route{Up: k%2 == 0, Metric: int64(k), Dst: fmt.Sprintf("10.%d.0.0/16", k)})
			}
			return shapeResource(i, s)
		},
		change: func(r resource.Resource, n int) {
			r.(*typed.Resource[mixedSpec, shapeDef]).TypedSpec().Routes[3].Metric = int64(n)
		},
	},
}

// BenchmarkDetectorWrite is the detector's cost per write, for each spec
// shape: one writer updates 1,000 resources round-robin, with no watcher
// and with a kind watcher that never reads (stalled), detector off and
// on. Run it with and without -race.
func BenchmarkDetectorWrite(b *testing.B) {
	for _, shape := range writeShapes {
		for _, stalled := range []bool{false, true} {
			for _, on := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/stalled=%t/detector=%t", shape.name, stalled, on), func(b *testing.B) {
					opts := []Option{withoutMutationDetector()}
					if on {
						opts = []Option{WithMutationDetector(nil)}
					}
					benchWrites(b, NewState(opts...), shape, stalled)
				})
			}
		}
	}
}

// BenchmarkDetectorStalledHistory is the detector's cost per write while
// a stalled kind watcher holds histories of growing capacity: it does
// not grow with what the watcher holds.
func BenchmarkDetectorStalledHistory(b *testing.B) {
	for _, capacity := range []int{1 << 10, 1 << 14, 1 << 18} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("history=%d/detector=%t", capacity, on), func(b *testing.B) {
				opts := []Option{WithHistoryCapacity(capacity), WithHistoryBytes(1 << 40), withoutMutationDetector()}
				if on {
					opts[2] = WithMutationDetector(nil)
				}
				benchWrites(b, NewState(opts...), payloadShape(512), true)
			})
		}
	}
}

// benchWrites measures updates of 1,000 resources of a shape, round-robin,
// on st; with stalled, a kind watcher that never reads watches them.
func benchWrites(b *testing.B, st state.State, shape writeShape, stalled bool) {
	const n = 1000
	ctx := b.Context()
	rs := make([]resource.Resource, n)
	for i := range rs {
		rs[i] = shape.make(i)
		require.NoError(b, st.Create(ctx, rs[i]))
	}
	if stalled {
		require.NoError(b, st.WatchKind(ctx, resource.NewKind(testNS, "Shapes.test.resgraph.dev"), make(chan state.Event)))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r := rs[i%n]
		shape.change(r, i)
		if err := st.Update(ctx, r); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestS7_DetectorCostIndependentOfPayload: the detector's extra work per
// write does not grow with the spec's data: with payloads of 16 bytes and
// of 8 KiB, and with a stalled kind watcher holding 2,048 versions or no
// watcher, a write allocates the same few objects more than without it
// (its reference copy and its guard); the comparisons allocate nothing.
func TestS7_DetectorCostIndependentOfPayload(t *testing.T) {
	extra := map[string]float64{}
	for _, size := range []int{16, 8 << 10} {
		for _, stalled := range []bool{false, true} {
			name := fmt.Sprintf("size=%d/stalled=%t", size, stalled)
			var allocs [2]float64
			for i, on := range []bool{false, true} {
				opts := []Option{WithHistoryBytes(64 << 20), withoutMutationDetector()}
				if on {
					opts[1] = WithMutationDetector(nil)
				}
				st, ctx := newTestState(t, opts...)
				if stalled {
					require.NoError(t, st.WatchKind(ctx, payloadKind, make(chan state.Event)))
				}
				r := newPayload(0, size)
				require.NoError(t, st.Create(ctx, r))
				for range 2048 { // what the stalled watcher holds
					require.NoError(t, st.Update(ctx, r))
				}
				n := 0
				allocs[i] = testing.AllocsPerRun(200, func() {
					n++
					binary.LittleEndian.PutUint64(r.TypedSpec().Payload, uint64(n))
					if err := st.Update(ctx, r); err != nil {
						t.Fatal(err)
					}
				})
			}
			extra[name] = allocs[1] - allocs[0]
			t.Logf("%s: %.1f allocations per write without the detector, %.1f with it", name, allocs[0], allocs[1])
		}
	}
	for name, n := range extra {
		require.LessOrEqual(t, n, 3.5, "%s: extra allocations per write", name)
		require.Equal(t, extra["size=16/stalled=false"], n, "%s: the same extra work for every payload", name)
	}
}

// TestS7_DetectorOffCostsTheHistoryNothing: every write adds a record to
// its kind's history, with the detector off too, so the detector keeps
// its reference copies beside the records (detector.refs), not in them: a
// record holds the change (old, new, seq, rev, size: 56 bytes on a
// 64-bit machine; the ID is read from old or new) and nothing of the
// detector, whose interface value would add 16 bytes to every write of
// every user.
func TestS7_DetectorOffCostsTheHistoryNothing(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(record{}), 3*unsafe.Sizeof(uint64(0))+2*unsafe.Sizeof(resource.Resource(nil)))
}
