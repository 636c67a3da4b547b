package main

import (
	"context"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// writeKeys writes a key file of one new key, ID id, and returns its
// path and the key.
func writeKeys(t *testing.T, id string) (string, atrest.Key) {
	t.Helper()
	k := atrest.Key{ID: id, Secret: make([]byte, atrest.KeySize)}
	_, _ = rand.Read(k.Secret)
	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(atrest.FormatKey(k)+"\n"), 0o600))
	return path, k
}

// runWithConfigDB runs the demo for a short while with --config-db.
func runWithConfigDB(t *testing.T, db string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut syncBuffer
	code = mainWithExit(append([]string{"run", "--duration", "1s", "--flap=false", "--apply-failures", "0",
		"--delete-link", "none", "--config-db", db}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// TestConfigDB_ConfigurationEncryptedOnDiskTheRestInMemory: with
// --config-db, the LinkSpecs (the configuration namespace) are kept in
// the file, encrypted — strings(1) on the file finds no spec content —
// and nothing of the other namespaces is; a second run starts from them.
func TestConfigDB_ConfigurationEncryptedOnDiskTheRestInMemory(t *testing.T) {
	if _, err := exec.LookPath("strings"); err != nil {
		t.Skip("strings (binutils) is not installed")
	}
	keys, key := writeKeys(t, "demo-1")
	db := filepath.Join(t.TempDir(), "config.db")
	stdout, stderr, code := runWithConfigDB(t, db, "--keys", keys)
	require.Zero(t, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "created    LinkSpec(config/eth0) v1")

	out, err := exec.Command("strings", "-n", "4", db).Output()
	require.NoError(t, err)
	for _, spec := range []string{"10.0.0.", "192.168.", "172.16.", "fd00", "Addresses", "Gateway", "DNSServers", "MTU", "1500", "9000"} {
		assert.NotContains(t, string(out), spec, "strings finds spec content in the file")
	}

	st := openDemoFile(t, db, key)
	l, err := st.List(t.Context(), resource.NewKind(netres.ConfigNamespace, netres.LinkSpecType))
	require.NoError(t, err)
	assert.Len(t, l.Items, 3, "the file holds the configuration")
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"demo-1": 3}, byKey)
	for _, k := range netres.Kinds() {
		if k.Namespace() != netres.ConfigNamespace {
			assert.Error(t, st.ValidateType(k), "nothing but the configuration can be in the file: %s", resource.KindString(k))
		}
	}
	require.NoError(t, st.Close())

	stdout, stderr, code = runWithConfigDB(t, db, "--keys", keys)
	require.Zero(t, code, "a second run over the same file: stderr: %s", stderr)
	assert.NotContains(t, stdout, "created    LinkSpec(config/eth0)", "the configuration is there already")
}

// TestConfigDB_WrongKeyRefusedNamingIt: a run with another key under the
// ID that wrote the file fails before the agent starts, naming the key;
// so does one without keys.
func TestConfigDB_WrongKeyRefusedNamingIt(t *testing.T) {
	keys, _ := writeKeys(t, "demo-1")
	db := filepath.Join(t.TempDir(), "config.db")
	_, stderr, code := runWithConfigDB(t, db, "--keys", keys)
	require.Zero(t, code, "stderr: %s", stderr)

	wrong, _ := writeKeys(t, "demo-1")
	_, stderr, code = runWithConfigDB(t, db, "--keys", wrong)
	assert.NotZero(t, code)
	assert.Contains(t, stderr, `key "demo-1"`)
	assert.Contains(t, stderr, "not the key that wrote")

	t.Setenv("RESGRAPH_DEMO_KEYS", "")
	_, stderr, code = runWithConfigDB(t, db)
	assert.NotZero(t, code)
	assert.Contains(t, stderr, "RESGRAPH_DEMO_KEYS")
}

// openDemoFile opens the demo's configuration file with key.
func openDemoFile(t *testing.T, path string, key atrest.Key) *boltdb.State {
	t.Helper()
	s, err := atrest.New(context.Background(), atrest.Config{Keys: atrest.StaticKeys(key)})
	require.NoError(t, err)
	reg := codec.NewRegistry()
	codec.MustRegister[netres.LinkSpecSpec, netres.LinkSpecDef](reg)
	st, err := boltdb.Open(path, reg, boltdb.WithSealer(s))
	require.NoError(t, err)
	return st
}
