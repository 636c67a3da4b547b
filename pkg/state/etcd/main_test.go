package etcd_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/internal/fixture/family"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/etcd"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
)

// The tests of this package share one etcd server, started by TestMain;
// each state under test has a key prefix of its own.
var (
	server *etcdtest.Server
	client *clientv3.Client
)

func TestMain(m *testing.M) {
	if name := os.Getenv(envChild); name != "" {
		os.Exit(childMain(name)) // a Runtime of a multi-process test
	}
	if name := os.Getenv(envHAChild); name != "" {
		os.Exit(haChildMain(name)) // a replica of a high-availability test
	}
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp(etcdtest.TempRoot(), "resgraph-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server, err = etcdtest.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	client, err = server.Client()
	if err != nil {
		server.Close()
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	client.Close()
	server.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

// registry knows the example resources of the conformance suites.
func registry() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[conformance.IntSpec, conformance.IntResourceDefinition](reg)
	codec.MustRegister[conformance.StrSpec, conformance.StrResourceDefinition](reg)
	codec.MustRegister[conformance.ListSpec, conformance.ListResourceDefinition](reg)
	codec.MustRegister[conformance.IntSpec, conformance.UndeclaredResourceDefinition](reg)
	registerChain(reg)
	family.Register(reg)
	return reg
}

var prefixes atomic.Int64

// newPrefix returns a key prefix no other state of the run uses.
func newPrefix() string { return fmt.Sprintf("/test-%d-%d/", os.Getpid(), prefixes.Add(1)) }

// newState returns a state on the test server with a fresh prefix.
func newState(tb testing.TB, opts ...etcd.Option) state.State {
	tb.Helper()
	st, err := etcd.New(context.Background(), client, registry(), append([]etcd.Option{etcd.WithPrefix(newPrefix())}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}
