package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/resgraph/resgraph/bench/common/params"
)

// TestRunnerBin_W7RunsInTheRemoteRunnersTheRestInTheLibraryRunners: each
// library's W7 runs in its remote runner, every other in-memory workload in
// the runner that links the library alone; a W7 whose remote runner was not
// built is not run.
func TestRunnerBin_W7RunsInTheRemoteRunnersTheRestInTheLibraryRunners(t *testing.T) {
	c := &config{cosiBin: "cosi", rgBin: "rg", cosiRemoteBin: "cosi-remote", rgRemoteBin: "rg-remote"}
	p := plan{nW1: 10, nChain: []int{10}, nRead: 10, w2Updates: 10, nE1: 10, nE3: []int{10}}
	avail := map[string]bool{bCOSI: true, bResgraph: true, bFloor: true}
	w7 := 0

	for _, k := range p.cases() {
		if k.etcd {
			continue
		}

		isW7 := k.args[1] == params.W7
		if isW7 {
			w7++
		}

		if k.remote != isW7 {
			t.Fatalf("%s: remote = %v", k.name, k.remote)
		}

		want := map[string]string{bCOSI: "cosi", bResgraph: "rg"}
		if isW7 {
			want = map[string]string{bCOSI: "cosi-remote", bResgraph: "rg-remote"}
		}

		for b, bin := range want {
			if got := c.runnerBin(b, k); got != bin {
				t.Errorf("%s, %s: runner %q, want %q", k.name, b, got, bin)
			}
		}

		without := *c
		without.cosiRemoteBin, without.rgRemoteBin = "", ""

		for _, b := range []string{bCOSI, bResgraph} {
			if got := without.has(avail, k, b); got == isW7 {
				t.Errorf("%s, %s without the remote runners: run = %v", k.name, b, got)
			}
		}
	}

	if w7 != 2 {
		t.Fatalf("%d W7 cases, want 2", w7)
	}
}

// TestTheResgraphRunnerLinksNoGRPC: the runner of every in-memory workload
// but W7 links what a daemon over the in-memory state links, and no gRPC
// (whose code would be resident in every process it measures).
func TestTheResgraphRunnerLinksNoGRPC(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	bench := filepath.Join(filepath.Dir(file), "..", "..", "..")

	for pkg, wantGRPC := range map[string]bool{"./resgraph/cmd/run": false, "./remote/cmd/run-resgraph": true} {
		cmd := exec.CommandContext(t.Context(), "go", "list", "-deps", pkg)
		cmd.Dir = bench
		cmd.Env = append(cmd.Environ(), "GOWORK=off")

		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}

		got := strings.Contains("\n"+string(out), "\ngoogle.golang.org/grpc\n")
		if got != wantGRPC {
			t.Errorf("%s links google.golang.org/grpc: %v, want %v", pkg, got, wantGRPC)
		}
	}
}
