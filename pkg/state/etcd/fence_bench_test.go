package etcd_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
)

// The write cost of fencing: W1 and W3 (bench/README.md) on the etcd state,
// without and with the writes fenced by a leadership term (one compare
// more in each write's transaction, and the fence's key read back when
// it fails). Run them as the other benchmarks of the package:
//
//	cd pkg/state/etcd && RESGRAPH_MUTATION_DETECTOR=0 go test -run '^$' -bench 'Fence' -benchtime 1x -count 6

// BenchmarkW1Fence is W1 (0 watchers) on etcd with fence=off and on: on,
// every write carries the fence of a term the benchmark leads.
func BenchmarkW1Fence(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("fence=%s", onOff(on)), func(b *testing.B) {
			var fence func(*testing.B, string) context.Context
			if on {
				fence = leadAt
			}
			benchW1(b, benchBackends[0].new, 0, fence)
		})
	}
}

// leadAt campaigns at prefix and returns a context whose writes are
// fenced by the term; the elector is closed at the end of the benchmark.
func leadAt(b *testing.B, prefix string) context.Context {
	el, err := etcd.NewElector(context.Background(), client, etcd.WithElectionPrefix(prefix))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = el.Close() })
	t, err := el.Campaign(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return state.WithFence(context.Background(), t.Fence())
}

// BenchmarkW3Fence is W3 (N = 1k, one process) on etcd with fence=off
// and on: on, the Runtime runs under leadership of its election, and every
// write of its controllers is fenced.
func BenchmarkW3Fence(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("fence=%s/N=%d", onOff(on), 1_000), func(b *testing.B) { benchW3(b, 1_000, false, on) })
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
