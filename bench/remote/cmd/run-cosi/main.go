// Command run-cosi runs W7 (the COSI runtime's state served over gRPC on
// loopback, ../../cosiworkloads) and prints one JSON line (see
// bench/common/runner). The other workloads run in ../../../cosi/cmd/run.
//
//	run-cosi -workload W7 -part list
package main

import (
	"os"

	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/remote/cosiworkloads"
)

func main() {
	runner.Main(runner.Backend{Name: "cosi", W7: cosiworkloads.W7}, os.Args[1:])
}
