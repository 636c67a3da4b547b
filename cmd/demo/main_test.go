package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests with a data directory of their own: a run
// command serves its API in it by default, which must not meet a demo
// running on the machine or another test binary's.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "resgraph-demo-test-")
	if err == nil {
		err = os.Setenv("XDG_RUNTIME_DIR", dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		_ = os.RemoveAll(dir)
		os.Exit(code)
	}))
}
