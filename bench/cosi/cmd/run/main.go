// Command run runs one workload against the COSI runtime and prints one JSON
// line (see bench/common/runner). The driver (../../compare) runs it
// once per workload and repetition, each in a fresh process.
//
//	run -workload W1 -watchers 8 -histcap 65536
//
// W7 (the state served over gRPC) has a runner of its own,
// ../../../remote/cmd/run-cosi, as resgraph's has.
package main

import (
	"os"

	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/cosi/workloads"
)

func main() {
	runner.Main(runner.Backend{
		Name:  "cosi",
		W1:    workloads.W1,
		W2:    workloads.W2,
		Chain: workloads.Chain,
		W5:    workloads.W5,
		W6:    workloads.W6,
	}, os.Args[1:])
}
