package boltdb_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.etcd.io/bbolt"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// newKey returns a random key of ID id.
func newKey(id string) atrest.Key {
	k := atrest.Key{ID: id, Secret: make([]byte, atrest.KeySize)}
	_, _ = rand.Read(k.Secret)
	return k
}

// sealer returns a sealer of cfg whose provider gives *keys at every call
// (a test changes the list to rotate).
func sealer(t testing.TB, cfg atrest.Config, keys *[]atrest.Key) *atrest.Sealer {
	t.Helper()
	cfg.Keys = atrest.KeyFunc(func(context.Context) ([]atrest.Key, error) { return *keys, nil })
	s, err := atrest.New(context.Background(), cfg)
	require.NoError(t, err)
	return s
}

// secretSpec is a spec value no file may show in clear.
func secretSpec(i int) int { return 770_000_000 + i }

// writePairs creates n pairs p0..p(n-1) holding secretSpec(i).
func writePairs(t *testing.T, st state.State, n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, st.Create(testContext(t), newPair(fmt.Sprintf("p%d", i), secretSpec(i))))
	}
}

// checkPairs checks that st holds the n pairs of writePairs.
func checkPairs(t *testing.T, st state.State, n int) {
	t.Helper()
	l, err := st.List(testContext(t), testKind)
	require.NoError(t, err)
	require.Len(t, l.Items, n)
	for i := range n {
		r, err := st.Get(testContext(t), ptr(fmt.Sprintf("p%d", i)))
		require.NoError(t, err)
		assert.Equal(t, secretSpec(i), r.(*pair).TypedSpec().A)
	}
}

// TestSealedStateConformance runs S1–S14 on a state whose records are
// compressed (above 16 bytes: all of them) and encrypted.
func TestSealedStateConformance(t *testing.T) {
	dir := fastDir(t)
	keys := []atrest.Key{newKey("k1")}
	s := sealer(t, atrest.Config{CompressAbove: 16}, &keys)
	suite.Run(t, &conformance.StateSuite{
		NewState: func() state.State {
			return openFast(t, dir, boltdb.WithSealer(s), boltdb.WithStateOptions(inmem.WithHistoryCapacity(conformanceHistory)))
		},
		HistoryCapacity: conformanceHistory,
	})
}

// TestP2_NoSpecInClearOnDisk: with encryption, the file holds no spec
// value, every record is under the writing key, and it opens again with
// everything.
func TestP2_NoSpecInClearOnDisk(t *testing.T) {
	keys := []atrest.Key{newKey("k1")}
	path := dbPath(t)
	st := open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	writePairs(t, st, 50)
	require.NoError(t, st.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for i := range 50 {
		assert.False(t, bytes.Contains(raw, fmt.Appendf(nil, "%d", secretSpec(i))), "spec %d in clear", i)
	}
	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	checkPairs(t, st, 50)
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k1": 50}, byKey)
}

// moveValue copies the stored value of pair from onto the key of pair to,
// in the closed file at path.
func moveValue(t *testing.T, path, from, to string) {
	t.Helper()
	keyOf := func(id string) []byte {
		return fmt.Appendf(nil, "%c%s%c%s%s", len(testNS), testNS, len(testType), testType, id)
	}
	db, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("resources"))
		v := b.Get(keyOf(from))
		require.NotNil(t, v)
		return b.Put(keyOf(to), bytes.Clone(v))
	}))
	require.NoError(t, db.Close())
}

// TestP2_ValueMovedToAnotherKeyFailsToDecrypt: a record copied onto
// another resource's key in the file fails authentication: Open refuses
// the file naming that key in strict mode (the file left untouched), and
// leaves the record out and reports it in lenient mode.
func TestP2_ValueMovedToAnotherKeyFailsToDecrypt(t *testing.T) {
	keys := []atrest.Key{newKey("k1")}
	path := dbPath(t)
	st := open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	writePairs(t, st, 3)
	require.NoError(t, st.Close())
	moveValue(t, path, "p0", "p1")
	sum := checksum(t, path)

	_, err := boltdb.Open(path, registry(), boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	require.ErrorIs(t, err, boltdb.ErrRecord)
	require.ErrorIs(t, err, atrest.ErrAuthentication)
	var fe *boltdb.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Pairs.test.resgraph.dev(default/p1)", fe.Key)
	assert.Equal(t, sum, checksum(t, path), "a refused file is left untouched")

	var reported []error
	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{Lenient: true, Report: func(err error) { reported = append(reported, err) }}, &keys)))
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], atrest.ErrAuthentication)
	assert.ErrorContains(t, reported[0], "default/p1")
	_, err = st.Get(testContext(t), ptr("p1"))
	assert.True(t, state.IsNotFoundError(err), "left out, as if absent: %v", err)
	r, err := st.Get(testContext(t), ptr("p0"))
	require.NoError(t, err)
	assert.Equal(t, secretSpec(0), r.(*pair).TypedSpec().A)
}

// TestP2_WrongOrMissingKeyRefusedAtOpenNamingIt: a key under the ID that
// wrote but with other bytes, a list without that ID, and no keys at all
// refuse the file with ErrKey naming the key ID, in strict and lenient
// mode, and leave it untouched.
func TestP2_WrongOrMissingKeyRefusedAtOpenNamingIt(t *testing.T) {
	keys := []atrest.Key{newKey("k1")}
	path := dbPath(t)
	st := open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	writePairs(t, st, 3)
	require.NoError(t, st.Close())
	sum := checksum(t, path)
	lenient := atrest.Config{Lenient: true, Report: func(err error) { t.Errorf("nothing to skip: %v", err) }}
	for name, c := range map[string]struct {
		opts []boltdb.Option
		want error
	}{
		"wrong key":           {[]boltdb.Option{boltdb.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{newKey("k1")}))}, atrest.ErrWrongKey},
		"wrong key, lenient":  {[]boltdb.Option{boltdb.WithSealer(sealer(t, lenient, &[]atrest.Key{newKey("k1")}))}, atrest.ErrWrongKey},
		"missing key":         {[]boltdb.Option{boltdb.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{newKey("k2")}))}, atrest.ErrKeyMissing},
		"missing, lenient":    {[]boltdb.Option{boltdb.WithSealer(sealer(t, lenient, &[]atrest.Key{newKey("k2")}))}, atrest.ErrKeyMissing},
		"no sealer":           {nil, atrest.ErrKeyMissing},
		"wrong key among two": {[]boltdb.Option{boltdb.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{newKey("k2"), newKey("k1")}))}, atrest.ErrWrongKey},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := boltdb.Open(path, registry(), c.opts...)
			require.ErrorIs(t, err, boltdb.ErrKey)
			require.ErrorIs(t, err, c.want)
			assert.ErrorContains(t, err, `key "k1"`)
			assert.Equal(t, sum, checksum(t, path))
		})
	}
}

// TestP2_PlaintextFileEncryptedByRotation: a file written without
// encryption is refused by a state with keys (its records are not the
// keys'), opens with ReadPlaintext, and a rotation encrypts every record;
// then it opens without ReadPlaintext. Old uncompressed records read on
// with compression turned on.
func TestP2_PlaintextFileEncryptedByRotation(t *testing.T) {
	path := dbPath(t)
	st := open(t, path)
	writePairs(t, st, 20)
	require.NoError(t, st.Close())
	keys := []atrest.Key{newKey("k1")}
	_, err := boltdb.Open(path, registry(), boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	require.ErrorIs(t, err, boltdb.ErrRecord)
	require.ErrorIs(t, err, atrest.ErrPlaintext)

	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{ReadPlaintext: true, CompressAbove: 16}, &keys)))
	checkPairs(t, st, 20)
	require.NoError(t, st.Rotate(testContext(t)))
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k1": 20}, byKey)
	require.NoError(t, st.Close())
	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	checkPairs(t, st, 20)
}

// TestP3_RotationRewritesEveryRecordWhileWriting: with a new key put
// first while the state runs, Rotate rewrites every record under it in
// batches while writers go on; each writer's last write is kept, and the
// file opens with the new key alone.
func TestP3_RotationRewritesEveryRecordWhileWriting(t *testing.T) {
	const n = 300
	keys := []atrest.Key{newKey("k1")}
	path := dbPath(t)
	st := open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)), boltdb.WithRotationBatch(16))
	writePairs(t, st, n)
	ctx := testContext(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, err := st.UpdateWithConflicts(ctx, ptr(fmt.Sprintf("p%d", w)), func(r resource.Resource) error {
					r.(*pair).TypedSpec().B = i
					return nil
				})
				assert.NoError(t, err)
			}
		})
	}
	keys = []atrest.Key{newKey("k2"), keys[0]}
	err := st.Rotate(ctx)
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, st.Stats().Rotated, uint64(n-2))
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k2": n}, byKey)
	want := map[string]int{}
	for w := range 2 {
		r, err := st.Get(ctx, ptr(fmt.Sprintf("p%d", w)))
		require.NoError(t, err)
		want[r.Metadata().ID()] = r.(*pair).TypedSpec().B
	}
	require.NoError(t, st.Close())
	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{keys[0]})))
	checkPairs(t, st, n)
	for id, b := range want {
		r, err := st.Get(ctx, ptr(id))
		require.NoError(t, err)
		assert.Equal(t, b, r.(*pair).TypedSpec().B, "the last write of %s is kept", id)
	}
}
