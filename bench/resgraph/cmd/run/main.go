// Command run runs one workload against resgraph and prints one JSON line
// (see bench/common/runner). The driver (../../compare) runs it
// once per workload and repetition, each in a fresh process.
//
//	run -workload W1 -watchers 8
package main

import (
	"os"

	"github.com/resgraph/resgraph/bench/common/runner"
	remoteworkloads "github.com/resgraph/resgraph/bench/remote/workloads"
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
		W7:    remoteworkloads.W7,
	}, os.Args[1:])
}
