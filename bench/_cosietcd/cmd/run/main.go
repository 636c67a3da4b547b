// Command run runs one etcd workload (E1, E3) against the COSI runtime on
// github.com/cosi-project/state-etcd and prints one JSON line (see
// bench/common/runner). The driver starts a fresh etcd for each run
// and passes its endpoint with -etcd.
//
//	run -workload E1 -watchers 4 -etcd 127.0.0.1:2379
package main

import (
	"os"

	"github.com/resgraph/resgraph/bench/common/runner"
	"github.com/resgraph/resgraph/bench/cosietcd/workloads"
)

func main() {
	runner.Main(runner.Backend{
		Name: "cosi",
		E1:   workloads.E1,
		E3:   workloads.E3,
	}, os.Args[1:])
}
