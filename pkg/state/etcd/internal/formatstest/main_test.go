package formatstest_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/etcd/internal/etcdtest"
)

// The tests of this package share one etcd server, started by TestMain;
// each state under test has a key prefix of its own.
var client *clientv3.Client

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp(etcdtest.TempRoot(), "resgraph-etcd-formats-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server, err := etcdtest.Start(dir)
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

// registry is a registry for the formats' types to be added to.
func registry() *codec.Registry { return codec.NewRegistry() }

var prefixes atomic.Int64

// newPrefix returns a key prefix no other state of the tests uses.
func newPrefix() string { return fmt.Sprintf("/formats-%d-%d/", os.Getpid(), prefixes.Add(1)) }
