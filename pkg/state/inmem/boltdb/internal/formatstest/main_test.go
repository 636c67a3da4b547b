package formatstest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource/codec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testNS = "default"

// registry is a registry for the formats' types to be added to.
func registry() *codec.Registry { return codec.NewRegistry() }

// dbPath is a new file path in the test's temporary directory.
func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") }

// testContext is a context that ends when the test does, or after 30 s
// (reaching it is a failure).
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
