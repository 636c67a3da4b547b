// Command run-resgraph runs W7 (resgraph's state served over gRPC on
// loopback, ../../workloads) and prints one JSON line (see
// bench/common/runner). The other workloads run in ../../../resgraph/cmd/run,
// which does not link gRPC.
//
//	run-resgraph -workload W7 -part fanout
package main

import (
	"os"

	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/remote/workloads"
)

func main() {
	runner.Main(runner.Backend{Name: "resgraph", W7: workloads.W7}, os.Args[1:])
}
