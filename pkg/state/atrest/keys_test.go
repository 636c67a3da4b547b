package atrest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// TestKeys_BadListsRefusedNamingTheKey: a key of the wrong length, two
// keys with one ID, a bad ID and no key are each a *KeyError of their
// kind naming the key, from ParseKeys and from New alike; the key's bytes
// are never in the error.
func TestKeys_BadListsRefusedNamingTheKey(t *testing.T) {
	good := newKey("good")
	short := atrest.Key{ID: "short", Secret: bytes.Repeat([]byte{0xab}, 16)}
	for name, c := range map[string]struct {
		keys []atrest.Key
		want error
		id   string
	}{
		"a 16-byte key":      {[]atrest.Key{good, short}, atrest.ErrKeyLength, "short"},
		"a 33-byte key":      {[]atrest.Key{{ID: "long", Secret: make([]byte, 33)}}, atrest.ErrKeyLength, "long"},
		"two keys of one ID": {[]atrest.Key{good, newKey("good")}, atrest.ErrDuplicateKeyID, "good"},
		"an empty ID":        {[]atrest.Key{{Secret: make([]byte, 32)}}, atrest.ErrBadKeyID, ""},
		"an ID with a space": {[]atrest.Key{{ID: "a b", Secret: make([]byte, 32)}}, atrest.ErrBadKeyID, "a b"},
		"no key":             {nil, atrest.ErrNoKeys, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := atrest.New(t.Context(), atrest.Config{Keys: atrest.StaticKeys(c.keys...)})
			require.ErrorIs(t, err, c.want)
			var ke *atrest.KeyError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, c.id, ke.KeyID)
			for _, k := range c.keys {
				if len(k.Secret) > 0 {
					assert.NotContains(t, err.Error(), base64.StdEncoding.EncodeToString(k.Secret))
				}
			}
		})
	}
}

// TestKeys_FileAndEnvironment: the text form read from a file and from an
// environment variable (commas or new lines between keys), comments and
// blank lines skipped, the first key first; a missing file and an unset
// variable are ErrKeySource.
func TestKeys_FileAndEnvironment(t *testing.T) {
	k1, k2 := newKey("k1"), newKey("k2")
	text := "# keys of the test\n\n" + atrest.FormatKey(k2) + "\n" + strings.Replace(atrest.FormatKey(k1), " ", ":", 1) + "\n"
	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	t.Setenv("ATREST_TEST_KEYS", atrest.FormatKey(k2)+","+atrest.FormatKey(k1))
	for name, p := range map[string]atrest.KeyProvider{
		"file": atrest.KeysFromFile(path),
		"env":  atrest.KeysFromEnv("ATREST_TEST_KEYS"),
	} {
		keys, err := p.Keys(t.Context())
		require.NoError(t, err, name)
		assert.Equal(t, []atrest.Key{k2, k1}, keys, name)
	}
	_, err := atrest.KeysFromFile(filepath.Join(t.TempDir(), "none")).Keys(t.Context())
	assert.ErrorIs(t, err, atrest.ErrKeySource)
	_, err = atrest.KeysFromEnv("ATREST_TEST_UNSET").Keys(t.Context())
	assert.ErrorIs(t, err, atrest.ErrKeySource)
	assert.ErrorContains(t, err, "ATREST_TEST_UNSET")
	_, err = atrest.ParseKeys([]byte("k1 not-base64!\n"))
	assert.ErrorIs(t, err, atrest.ErrKeyLength)
	_, err = atrest.ParseKeys([]byte("justoneword\n"))
	assert.ErrorIs(t, err, atrest.ErrBadKeyID)
}

// TestKeys_ProviderFailureIsAKeySourceError: a function provider's error
// reaches New as ErrKeySource, wrapping it.
func TestKeys_ProviderFailureIsAKeySourceError(t *testing.T) {
	boom := errors.New("vault sealed")
	_, err := atrest.New(t.Context(), atrest.Config{Keys: atrest.KeyFunc(func(context.Context) ([]atrest.Key, error) { return nil, boom })})
	assert.ErrorIs(t, err, atrest.ErrKeySource)
	assert.ErrorIs(t, err, boom)
}
