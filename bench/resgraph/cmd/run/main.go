// Command run runs one workload against resgraph and prints one JSON line
// (see bench/common/runner). The driver (../../compare) runs it
// once per workload and repetition, each in a fresh process.
//
//	run -workload W1 -watchers 8
//
// It links what a daemon running these workloads links: the library over
// its in-memory state. W7 (the state served over gRPC) has a runner of its
// own, ../../../remote/cmd/run-resgraph, so that gRPC's code is not
// resident in the processes that measure the other workloads' memory.
package main

import (
	"os"

	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/resgraph/workloads"
)

func main() {
	runner.Main(runner.Backend{
		Name:  "resgraph",
		W1:    workloads.W1,
		W2:    workloads.W2,
		Chain: workloads.Chain,
		W5:    workloads.W5,
		W6:    workloads.W6,
	}, os.Args[1:])
}
