package atrest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newKey returns a random key of ID id.
func newKey(id string) atrest.Key {
	k := atrest.Key{ID: id, Secret: make([]byte, atrest.KeySize)}
	_, _ = rand.Read(k.Secret)
	return k
}

// newSealer returns a Sealer of cfg with keys (none: no encryption).
func newSealer(t testing.TB, cfg atrest.Config, keys ...atrest.Key) *atrest.Sealer {
	t.Helper()
	if len(keys) > 0 {
		cfg.Keys = atrest.StaticKeys(keys...)
	}
	s, err := atrest.New(context.Background(), cfg)
	require.NoError(t, err)
	return s
}

// encoding is a stand-in for a resource's encoding: it begins as
// pkg/resource/codec's do, and n bytes long, compressible.
func encoding(n int) []byte {
	b := []byte("rgr\x01")
	for len(b) < n {
		b = append(b, "spec: some text that repeats, "...)
	}
	return b[:n]
}

// TestP2_RoundTripInEveryConfiguration: a record opens to the encoding it
// was sealed from, with or without compression and encryption, small and
// large; without either it is the encoding itself.
func TestP2_RoundTripInEveryConfiguration(t *testing.T) {
	k := newKey("k1")
	for name, s := range map[string]*atrest.Sealer{
		"plain":            newSealer(t, atrest.Config{}),
		"compressed":       newSealer(t, atrest.Config{CompressAbove: 100}),
		"encrypted":        newSealer(t, atrest.Config{}, k),
		"compressed+enc":   newSealer(t, atrest.Config{CompressAbove: 100}, k),
		"threshold 0+enc":  newSealer(t, atrest.Config{CompressAbove: 0}, k),
		"huge threshold+z": newSealer(t, atrest.Config{CompressAbove: 1 << 20}),
	} {
		for _, n := range []int{4, 100, 101, 4096} {
			plain := encoding(n)
			rec, err := s.Seal(nil, "ns", "T", "id", plain)
			require.NoError(t, err, name)
			out, err := s.Open(nil, "ns", "T", "id", rec)
			require.NoError(t, err, "%s n=%d", name, n)
			assert.Equal(t, plain, out, "%s n=%d", name, n)
			if !s.Encrypts() && n <= 100 {
				assert.Equal(t, plain, rec, "%s: below the threshold, unencrypted, a record is the encoding", name)
			}
		}
	}
}

// TestP2_EveryEncryptedRecordCarriesItsKeyIDAndAFreshNonce: the same
// encoding sealed twice gives two different records, each under the
// writing key's ID, and no plaintext in the record.
func TestP2_EveryEncryptedRecordCarriesItsKeyIDAndAFreshNonce(t *testing.T) {
	s := newSealer(t, atrest.Config{}, newKey("k2"), newKey("k1"))
	plain := encoding(300)
	a, err := s.Seal(nil, "ns", "T", "id", plain)
	require.NoError(t, err)
	b, err := s.Seal(nil, "ns", "T", "id", plain)
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "a fresh nonce per record")
	for _, rec := range [][]byte{a, b} {
		id, err := atrest.KeyID(rec)
		require.NoError(t, err)
		assert.Equal(t, "k2", id, "the first key writes")
		assert.False(t, bytes.Contains(rec, []byte("some text")), "no plaintext in an encrypted record")
	}
}

// TestP2_RecordMovedToAnotherResourceFailsToOpen: a record opened as the
// record of another namespace, type or ID fails authentication, naming
// the resource it was opened as and its key ID.
func TestP2_RecordMovedToAnotherResourceFailsToOpen(t *testing.T) {
	s := newSealer(t, atrest.Config{CompressAbove: 64}, newKey("k1"))
	for _, n := range []int{32, 1000} {
		rec, err := s.Seal(nil, "ns", "T", "a", encoding(n))
		require.NoError(t, err)
		for _, other := range [][3]string{{"ns", "T", "b"}, {"ns2", "T", "a"}, {"ns", "U", "a"}, {"nsT", "", "a"}, {"n", "sT", "a"}} {
			out, err := s.Open(nil, other[0], other[1], other[2], rec)
			require.Error(t, err, "opened as %v", other)
			assert.Nil(t, out, "no partial resource")
			assert.ErrorIs(t, err, atrest.ErrAuthentication)
			var re *atrest.RecordError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "k1", re.KeyID)
			assert.Equal(t, other[1]+"("+other[0]+"/"+other[2]+")", re.Resource)
		}
	}
}

// TestP2_TamperedRecordsFailToOpen: a flipped bit anywhere, a truncation
// anywhere, a changed flag and a changed key ID are each an error, never
// a resource.
func TestP2_TamperedRecordsFailToOpen(t *testing.T) {
	s := newSealer(t, atrest.Config{CompressAbove: 64}, newKey("k1"), newKey("k9"))
	for _, n := range []int{20, 500} {
		rec, err := s.Seal(nil, "ns", "T", "id", encoding(n))
		require.NoError(t, err)
		for i := range rec {
			for bit := range 8 {
				bad := bytes.Clone(rec)
				bad[i] ^= 1 << bit
				_, err := s.Open(nil, "ns", "T", "id", bad)
				require.Error(t, err, "bit %d of byte %d flipped", bit, i)
				assert.True(t, atrest.IsRecordError(err))
			}
		}
		for i := range len(rec) {
			_, err := s.Open(nil, "ns", "T", "id", rec[:i])
			if i < 3 {
				continue // too short to be framed: taken as a plaintext record, refused below
			}
			require.Error(t, err, "truncated to %d bytes", i)
		}
		wrongID := bytes.Replace(rec, []byte("k1"), []byte("k9"), 1)
		_, err = s.Open(nil, "ns", "T", "id", wrongID)
		assert.ErrorIs(t, err, atrest.ErrAuthentication, "another key ID of the same length")
	}
}

// TestP2_PlaintextRecordRefusedWhereTheStoreEncrypts: a record that is
// not encrypted (an old one, or one put there by someone without the
// keys) is refused by a Sealer that encrypts, unless it reads plaintext.
func TestP2_PlaintextRecordRefusedWhereTheStoreEncrypts(t *testing.T) {
	old := newSealer(t, atrest.Config{CompressAbove: 64})
	k := newKey("k1")
	strict := newSealer(t, atrest.Config{}, k)
	migrating := newSealer(t, atrest.Config{ReadPlaintext: true}, k)
	for _, n := range []int{20, 500} {
		plain := encoding(n)
		rec, err := old.Seal(nil, "ns", "T", "id", plain)
		require.NoError(t, err)
		_, err = strict.Open(nil, "ns", "T", "id", rec)
		assert.ErrorIs(t, err, atrest.ErrPlaintext)
		out, err := migrating.Open(nil, "ns", "T", "id", rec)
		require.NoError(t, err)
		assert.Equal(t, plain, out)
		assert.True(t, migrating.Stale(rec), "a rotation encrypts it")
	}
}

// TestP2_RecordOfAMissingKeyNamesTheKey: a record of a key the Sealer
// does not have is ErrKeyMissing naming the key ID; so is one read with
// no keys at all.
func TestP2_RecordOfAMissingKeyNamesTheKey(t *testing.T) {
	rec, err := newSealer(t, atrest.Config{}, newKey("gone")).Seal(nil, "ns", "T", "id", encoding(50))
	require.NoError(t, err)
	for _, s := range []*atrest.Sealer{newSealer(t, atrest.Config{}, newKey("k1")), newSealer(t, atrest.Config{})} {
		_, err = s.Open(nil, "ns", "T", "id", rec)
		assert.ErrorIs(t, err, atrest.ErrKeyMissing)
		assert.ErrorContains(t, err, `"gone"`)
	}
}

// TestP2_SameIDWrongKeyFailsAuthentication: a record opened with another
// key under the ID that wrote it fails authentication.
func TestP2_SameIDWrongKeyFailsAuthentication(t *testing.T) {
	rec, err := newSealer(t, atrest.Config{}, newKey("k1")).Seal(nil, "ns", "T", "id", encoding(50))
	require.NoError(t, err)
	_, err = newSealer(t, atrest.Config{}, newKey("k1")).Open(nil, "ns", "T", "id", rec)
	assert.ErrorIs(t, err, atrest.ErrAuthentication)
}

// TestP2_OldRecordsReadAfterEveryChange: records written before
// compression was turned on, before the threshold changed, and under an
// older key read on with the new configuration.
func TestP2_OldRecordsReadAfterEveryChange(t *testing.T) {
	k1, k2 := newKey("k1"), newKey("k2")
	plain := encoding(2000)
	var recs [][]byte
	for _, s := range []*atrest.Sealer{
		newSealer(t, atrest.Config{}, k1),
		newSealer(t, atrest.Config{CompressAbove: 100}, k1),
		newSealer(t, atrest.Config{CompressAbove: 5000}, k1),
	} {
		rec, err := s.Seal(nil, "ns", "T", "id", plain)
		require.NoError(t, err)
		recs = append(recs, rec)
	}
	now := newSealer(t, atrest.Config{CompressAbove: 1000}, k2, k1)
	for i, rec := range recs {
		out, err := now.Open(nil, "ns", "T", "id", rec)
		require.NoError(t, err, "record %d", i)
		assert.Equal(t, plain, out)
		assert.True(t, now.Stale(rec), "under k1, not the first key")
		again, err := now.Reseal("ns", "T", "id", rec)
		require.NoError(t, err)
		assert.False(t, now.Stale(again))
		id, _ := atrest.KeyID(again)
		assert.Equal(t, "k2", id)
	}
}

// TestP3_NewKeysWriteOnceUsed: after the provider puts a new key first,
// LoadKeys returns it without using it; once used it writes, and records
// of the old key still read; a provider that then gives bad keys is an
// error, and the keys stay as they were.
func TestP3_NewKeysWriteOnceUsed(t *testing.T) {
	k1, k2 := newKey("k1"), newKey("k2")
	list := []atrest.Key{k1}
	fail := false
	s, err := atrest.New(t.Context(), atrest.Config{Keys: atrest.KeyFunc(func(context.Context) ([]atrest.Key, error) {
		if fail {
			return []atrest.Key{k2, {ID: "short", Secret: []byte("x")}}, nil
		}
		return list, nil
	})})
	require.NoError(t, err)
	old, err := s.Seal(nil, "ns", "T", "id", encoding(40))
	require.NoError(t, err)
	list = []atrest.Key{k2, k1}
	ks, err := s.LoadKeys(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "k1", s.WriteKeyID(), "loaded, not used yet")
	s.Use(ks)
	assert.Equal(t, "k2", s.WriteKeyID())
	assert.Equal(t, []string{"k2", "k1"}, s.Keys().IDs())
	_, err = s.Open(nil, "ns", "T", "id", old)
	require.NoError(t, err)
	fail = true
	_, err = s.LoadKeys(t.Context())
	assert.ErrorIs(t, err, atrest.ErrKeyLength)
	assert.ErrorContains(t, err, `"short"`)
	assert.Equal(t, "k2", s.WriteKeyID(), "a failed reload changes nothing")
}

// TestP2_KeyCheckTellsAWrongKeyFromAMissingOne: the key check a Sealer
// writes verifies under its key, fails under another key of the same ID
// (ErrWrongKey), and names the ID a Sealer lacks (ErrKeyMissing).
func TestP2_KeyCheckTellsAWrongKeyFromAMissingOne(t *testing.T) {
	k1 := newKey("k1")
	check, err := newSealer(t, atrest.Config{}, k1).Keys().KeyCheck()
	require.NoError(t, err)
	require.NoError(t, newSealer(t, atrest.Config{}, newKey("k2"), k1).Keys().Verify("k1", check))
	checks := func(id string) []byte {
		if id == "k1" {
			return check
		}
		return nil
	}
	require.NoError(t, newSealer(t, atrest.Config{}, newKey("k2"), k1).Keys().VerifyAll(checks))
	err = newSealer(t, atrest.Config{}, newKey("k1")).Keys().Verify("k1", check)
	assert.ErrorIs(t, err, atrest.ErrWrongKey)
	assert.ErrorContains(t, err, `"k1"`)
	err = newSealer(t, atrest.Config{}, newKey("k3"), newKey("k1")).Keys().VerifyAll(checks)
	assert.ErrorIs(t, err, atrest.ErrWrongKey)
	err = newSealer(t, atrest.Config{}, newKey("k2")).Keys().Verify("k1", check)
	assert.ErrorIs(t, err, atrest.ErrKeyMissing)
	assert.True(t, atrest.IsKeyError(err))
	_, err = newSealer(t, atrest.Config{}, k1).Open(nil, "ns", "resgraph key check", "x", check)
	assert.ErrorIs(t, err, atrest.ErrAuthentication, "a key check opens as no resource's record")
}

// TestConfig_BadInputRefused: lenient mode without a report, a negative
// threshold.
func TestConfig_BadInputRefused(t *testing.T) {
	_, err := atrest.New(t.Context(), atrest.Config{Lenient: true})
	assert.ErrorContains(t, err, "Report")
	_, err = atrest.New(t.Context(), atrest.Config{CompressAbove: -1})
	assert.Error(t, err)
	s := newSealer(t, atrest.Config{Lenient: true, Report: func(error) {}})
	assert.True(t, s.Lenient())
	assert.False(t, s.Encrypts())
	assert.Empty(t, s.WriteKeyID())
	assert.False(t, strings.Contains(atrest.FormatKey(newKey("x")), "\n"))
}
