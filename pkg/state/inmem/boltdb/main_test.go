package boltdb_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// TestMain runs the tests, or, in a process a test started, that test's
// writer (crash_test.go, diskfull_test.go) or lock user (lock_test.go).
func TestMain(m *testing.M) {
	if child := os.Getenv(childEnv); child != "" {
		os.Exit(runChild(child))
	}
	if arg := os.Getenv(lockChildEnv); arg != "" {
		os.Exit(runLockChild(arg))
	}
	if path := os.Getenv(diskFullEnv); path != "" {
		os.Exit(runDiskFullChild(path))
	}
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait of the tests; reaching it is a failure.
const testTimeout = 30 * time.Second

// pairSpec is the spec of the test resources: two ints, as in the
// benchmark workloads.
type pairSpec struct{ A, B int }

type pairDef struct{}

func (pairDef) Definition() typed.Definition {
	return typed.Definition{Type: "Pairs.test.resgraph.dev", DefaultNamespace: "default"}
}

type pair = typed.Resource[pairSpec, pairDef]

const (
	testNS   = "default"
	testType = "Pairs.test.resgraph.dev"
)

var testKind = resource.NewKind(testNS, testType)

func newPair(id string, a int) *pair {
	return typed.New[pairSpec, pairDef](resource.NewMetadata(testNS, testType, id, resource.VersionUndefined), pairSpec{A: a})
}

func ptr(id string) resource.Pointer { return resource.NewPointer(testNS, testType, id) }

// registry knows the test types and the conformance suite's.
func registry() *codec.Registry {
	reg := codec.NewRegistry()
	codec.MustRegister[pairSpec, pairDef](reg)
	codec.MustRegister[conformance.IntSpec, conformance.IntResourceDefinition](reg)
	codec.MustRegister[conformance.StrSpec, conformance.StrResourceDefinition](reg)
	codec.MustRegister[conformance.ListSpec, conformance.ListResourceDefinition](reg)
	codec.MustRegister[conformance.IntSpec, conformance.UndeclaredResourceDefinition](reg)
	codec.MustRegister[ifaceSpec, ifaceDef](reg)
	return reg
}

// dbPath is a new file path in the test's temporary directory.
func dbPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "state.db")
}

// open opens the state at path and closes it at the end of the test.
func open(t *testing.T, path string, opts ...boltdb.Option) *boltdb.State {
	t.Helper()
	st, err := boltdb.Open(path, registry(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// testContext is canceled at the end of the test.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// checksum returns the SHA-256 of a file.
func checksum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

func version(r resource.Resource) uint64 { return r.Metadata().Version().Value() }
