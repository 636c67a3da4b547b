package boltdb_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// The benchmarks run W1 of bench/README.md (create 10k resources, then
// update each once; 0 or 8 kind watchers draining their channels) on a
// persistent state under each durability policy and, as the reference, on
// the in-memory state without persistence. W1 has one writer, which under
// the default policy waits for a commit per write; W1/writers=8 splits
// the same writes over 8 goroutines, so that group commit can gather
// them, and reports the commits (transactions; bbolt makes each durable
// with two fdatasync calls) per second and the writes per commit.
//
// Run them (without the mutation detector, as make bench does):
//
//	RESGRAPH_MUTATION_DETECTOR=0 go test -run '^$' -bench W1 -benchtime 3x -count 6 .

// benchInterval is the interval policy's interval in the benchmarks.
const benchInterval = 10 * time.Millisecond

// benchPolicies are the states measured: none is inmem without
// persistence.
var benchPolicies = []string{"none", "sync", "interval"}

// newBenchState opens the state of a policy in dir; closing it is
// the caller's.
func newBenchState(b *testing.B, policy, dir string) (state.State, func() boltdb.Stats) {
	switch policy {
	case "none":
		return inmem.NewState(), func() boltdb.Stats { return boltdb.Stats{} }
	case "sync", "interval":
		var opts []boltdb.Option
		if policy == "interval" {
			opts = append(opts, boltdb.WithInterval(benchInterval, 0))
		}
		st, err := boltdb.Open(filepath.Join(dir, "w1.db"), registry(), opts...)
		if err != nil {
			b.Fatal(err)
		}
		return st, func() boltdb.Stats {
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
			return st.Stats()
		}
	}
	panic(policy)
}

// BenchmarkW1 is W1 with one writer, and with eight.
func BenchmarkW1(b *testing.B) {
	for _, writers := range []int{1, 8} {
		for _, watchers := range []int{0, 8} {
			for _, policy := range benchPolicies {
				b.Run(fmt.Sprintf("writers=%d/watchers=%d/persistence=%s", writers, watchers, policy), func(b *testing.B) {
					benchW1(b, policy, writers, watchers)
				})
			}
		}
	}
}

func benchW1(b *testing.B, policy string, writers, watchers int) {
	const n = 10_000
	b.ReportAllocs()
	var (
		total   time.Duration
		stats   boltdb.Stats
		iters   int
		commitT time.Duration
	)
	for b.Loop() {
		b.StopTimer()
		st, closeState := newBenchState(b, policy, b.TempDir())
		rs := make([]*pair, n)
		for i := range rs {
			rs[i] = newPair(fmt.Sprintf("res-%06d", i), 0)
			rs[i].TypedSpec().B = i
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		dones := make([]chan struct{}, watchers)
		for w := range watchers {
			ch := make(chan state.Event, 1024)
			if err := st.WatchKind(ctx, testKind, ch); err != nil {
				b.Fatal(err)
			}
			dones[w] = make(chan struct{})
			wg.Go(func() { drainUntilFinal(ctx, ch, n, dones[w]) })
		}
		b.StartTimer()

		start := time.Now()
		var writerWG sync.WaitGroup
		for w := range writers {
			writerWG.Go(func() {
				for i := w; i < n; i += writers {
					if err := st.Create(ctx, rs[i]); err != nil {
						panic(err)
					}
				}
				for i := w; i < n; i += writers {
					rs[i].TypedSpec().A = 1
					if err := st.Update(ctx, rs[i]); err != nil {
						panic(err)
					}
				}
			})
		}
		writerWG.Wait()
		for _, done := range dones {
			<-done
		}
		total += time.Since(start)

		b.StopTimer()
		cancel()
		wg.Wait()
		s := closeState()
		stats.Commits += s.Commits
		stats.Writes += s.Writes
		commitT += s.CommitTime
		iters++
		b.StartTimer()
	}
	ops := float64(2 * n * iters)
	b.ReportMetric(ops/total.Seconds(), "ops/s")
	if stats.Commits > 0 {
		b.ReportMetric(float64(stats.Commits)/total.Seconds(), "commits/s")
		b.ReportMetric(float64(stats.Writes)/float64(stats.Commits), "writes/commit")
		b.ReportMetric(float64(commitT.Microseconds())/float64(stats.Commits), "µs/commit")
	}
}

// drainUntilFinal drains a kind watch and closes done once every one of
// n resources (by spec B) was seen at version 2.
func drainUntilFinal(ctx context.Context, ch <-chan state.Event, n int, done chan<- struct{}) {
	final := make([]bool, n)
	reached := 0
	for {
		select {
		case ev := <-ch:
			if ev.Type != state.Created && ev.Type != state.Updated {
				continue
			}
			i := ev.Resource.(*pair).TypedSpec().B
			if version(ev.Resource) == 2 && !final[i] {
				final[i] = true
				if reached++; reached == n {
					close(done)
				}
			}
		case <-ctx.Done():
			return
		}
	}
}
