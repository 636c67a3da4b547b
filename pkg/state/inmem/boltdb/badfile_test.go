package boltdb_test

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// A file Open refuses gets a *FileError of the problem's class, and is
// left untouched (same bytes, same modification time).

// TestOpen_BadFiles is the table of bad files.
func TestOpen_BadFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(t *testing.T, path string)
		want error
		key  string // the FileError's Key, when it names one
	}{
		{"random bytes", func(t *testing.T, path string) {
			writeRandom(t, path, 64<<10)
		}, boltdb.ErrCorrupt, ""},
		{"a few random bytes", func(t *testing.T, path string) {
			writeRandom(t, path, 100)
		}, boltdb.ErrCorrupt, ""},
		{"truncated", func(t *testing.T, path string) {
			validFile(t, path, 300)
			info, err := os.Stat(path)
			require.NoError(t, err)
			require.NoError(t, os.Truncate(path, info.Size()/2))
		}, boltdb.ErrCorrupt, ""},
		{"data pages damaged", func(t *testing.T, path string) {
			validFile(t, path, 300)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(1, 2))
			for i := 4 * 4096; i < len(b); i += 97 {
				b[i] = byte(rng.Uint32())
			}
			require.NoError(t, os.WriteFile(path, b, 0o600))
		}, boltdb.ErrCorrupt, ""},
		{"another application's bbolt file", func(t *testing.T, path string) {
			withBolt(t, path, func(tx *bbolt.Tx) error {
				b, err := tx.CreateBucket([]byte("widgets"))
				if err != nil {
					return err
				}
				return b.Put([]byte("w1"), []byte("blue"))
			})
		}, boltdb.ErrForeign, ""},
		{"a state file with a foreign bucket", func(t *testing.T, path string) {
			validFile(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				_, err := tx.CreateBucket([]byte("widgets"))
				return err
			})
		}, boltdb.ErrForeign, ""},
		{"newer format", func(t *testing.T, path string) {
			validFile(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("resgraph")).Put([]byte("format"), binary.AppendUvarint(nil, 3))
			})
		}, boltdb.ErrNewerFormat, ""},
		{"metadata damaged", func(t *testing.T, path string) {
			validFile(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("resgraph")).Delete([]byte("lineage"))
			})
		}, boltdb.ErrCorrupt, ""},
		{"undecodable record", func(t *testing.T, path string) {
			validFile(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("resources")).Put(rawKey(testNS, testType, "r1"), []byte("not a resource"))
			})
		}, boltdb.ErrUndecodable, "Pairs.test.resgraph.dev(default/r1)"},
		{"record under another resource's key", func(t *testing.T, path string) {
			validFile(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				res := tx.Bucket([]byte("resources"))
				v := append([]byte(nil), res.Get(rawKey(testNS, testType, "r1"))...)
				return res.Put(rawKey(testNS, testType, "zz"), v)
			})
		}, boltdb.ErrUndecodable, "Pairs.test.resgraph.dev(default/zz)"},
		{"malformed key", func(t *testing.T, path string) {
			validFile(t, path, 3)
			withBolt(t, path, func(tx *bbolt.Tx) error {
				return tx.Bucket([]byte("resources")).Put([]byte{0xff}, []byte("x"))
			})
		}, boltdb.ErrUndecodable, `"\xff"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := dbPath(t)
			tc.make(t, path)
			sum, info := checksum(t, path), stat(t, path)

			st, err := boltdb.Open(path, registry(), boltdb.WithLockTimeout(100*time.Millisecond))
			if st != nil {
				_ = st.Close()
			}
			require.ErrorIs(t, err, tc.want)
			var fe *boltdb.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, path, fe.Path)
			assert.Equal(t, tc.key, fe.Key)
			t.Log(err)

			assert.Equal(t, sum, checksum(t, path), "the file is untouched")
			assert.Equal(t, info.ModTime(), stat(t, path).ModTime(), "the file is untouched")
		})
	}
}

// TestOpen_UnregisteredTypeInTheFile: a file holding a type the registry
// does not know is refused as undecodable (with the codec's
// UnknownTypeError in the chain), untouched.
func TestOpen_UnregisteredTypeInTheFile(t *testing.T) {
	path := dbPath(t)
	validFile(t, path, 2)
	sum := checksum(t, path)
	_, err := boltdb.Open(path, codec.NewRegistry())
	assert.ErrorIs(t, err, boltdb.ErrUndecodable)
	assert.True(t, codec.IsUnknownTypeError(err), "%v", err)
	assert.Equal(t, sum, checksum(t, path))
}

// TestOpen_EmptyFileIsANewState: an empty file (created, never written)
// is a new state, not a corrupt one.
func TestOpen_EmptyFileIsANewState(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	st := open(t, path)
	require.NoError(t, st.Create(testContext(t), newPair("x", 1)))
}

// validFile makes a state file holding n resources r0, r1, ...
func validFile(t *testing.T, path string, n int) {
	t.Helper()
	st, err := boltdb.Open(path, registry(), boltdb.WithInterval(time.Hour, 0)) // one commit, at Close
	require.NoError(t, err)
	ctx := testContext(t)
	for i := range n {
		require.NoError(t, st.Create(ctx, newPair("r"+strconv.Itoa(i), i)))
	}
	require.NoError(t, st.Close())
}

// withBolt changes a file with bbolt directly, as another program would.
func withBolt(t *testing.T, path string, fn func(*bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(fn))
	require.NoError(t, db.Close())
}

// rawKey is the stored key of a resource (see format.go).
func rawKey(ns, typ, id string) []byte {
	k := binary.AppendUvarint(nil, uint64(len(ns)))
	k = append(k, ns...)
	k = binary.AppendUvarint(k, uint64(len(typ)))
	k = append(k, typ...)
	return append(k, id...)
}

func writeRandom(t *testing.T, path string, n int) {
	t.Helper()
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	require.NoError(t, os.WriteFile(path, b, 0o600))
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info
}
