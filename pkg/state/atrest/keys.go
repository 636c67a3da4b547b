package atrest

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"unicode"
)

// KeySize is the length of every key: AES-256.
const KeySize = 32

// maxKeyIDLen bounds a key ID (it is stored in every record).
const maxKeyIDLen = 64

// Key is an encryption key: 32 random bytes (AES-256) and the ID that
// records written with it carry, so that a reader knows which key opens
// them. An ID is 1 to 64 printable characters, without spaces or commas.
type Key struct {
	ID     string
	Secret []byte
}

// KeyProvider gives the keys of a store: the first key of the list writes
// every record, and every key of the list reads the records written with
// it. Keys is called when a store opens and when it rotates (see
// [Sealer.Reload]); it is safe for concurrent use.
//
// To rotate keys, put the new key first and keep the old ones after it
// until every record is rewritten under the new key (the backend's
// Rotate); then the old ones may go.
type KeyProvider interface {
	Keys(ctx context.Context) ([]Key, error)
}

// KeyFunc is a [KeyProvider] that is a function (a secret manager's
// client, a test's keys).
type KeyFunc func(ctx context.Context) ([]Key, error)

// Keys implements [KeyProvider].
func (f KeyFunc) Keys(ctx context.Context) ([]Key, error) { return f(ctx) }

// StaticKeys returns a [KeyProvider] of a fixed list (the first writes).
func StaticKeys(keys ...Key) KeyProvider {
	keys = append([]Key(nil), keys...)
	return KeyFunc(func(context.Context) ([]Key, error) { return keys, nil })
}

// KeysFromFile returns a [KeyProvider] that reads the keys from the file
// at path at every call, in the text form of [ParseKeys]: one key per
// line, the first writes. Keep the file readable by the daemon only.
func KeysFromFile(path string) KeyProvider {
	return KeyFunc(func(context.Context) ([]Key, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, &KeyError{Err: ErrKeySource, Cause: err}
		}
		keys, err := ParseKeys(b)
		if err != nil {
			return nil, fmt.Errorf("atrest: key file %s: %w", path, err)
		}
		return keys, nil
	})
}

// KeysFromEnv returns a [KeyProvider] that reads the keys from the
// environment variable name at every call, in the text form of
// [ParseKeys] (commas may separate the keys instead of new lines). An
// unset or empty variable is an [ErrKeySource] error naming it.
func KeysFromEnv(name string) KeyProvider {
	return KeyFunc(func(context.Context) ([]Key, error) {
		v := os.Getenv(name)
		if strings.TrimSpace(v) == "" {
			return nil, &KeyError{Err: ErrKeySource, Cause: fmt.Errorf("environment variable %s is unset or empty", name)}
		}
		keys, err := ParseKeys([]byte(strings.ReplaceAll(v, ",", "\n")))
		if err != nil {
			return nil, fmt.Errorf("atrest: environment variable %s: %w", name, err)
		}
		return keys, nil
	})
}

// ParseKeys reads keys in their text form: one key per line, as its ID,
// a space or a colon, and the standard base64 encoding of its 32 bytes;
// blank lines and lines beginning with # are skipped. The first key
// writes. A key of the wrong length, an ID used twice and a malformed
// line are errors naming the key (or the line); the bytes are never in
// an error.
func ParseKeys(text []byte) ([]Key, error) {
	var keys []Key
	for n, line := range bytes.Split(text, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		i := bytes.IndexFunc(line, func(r rune) bool { return r == ':' || unicode.IsSpace(r) })
		if i <= 0 {
			return nil, &KeyError{Err: ErrBadKeyID, Cause: fmt.Errorf("line %d: want an ID, a space or colon, and the key in base64", n+1)}
		}
		id := string(line[:i])
		secret, err := base64.StdEncoding.DecodeString(string(bytes.TrimSpace(line[i+1:])))
		if err != nil {
			return nil, &KeyError{KeyID: id, Err: ErrKeyLength, Cause: fmt.Errorf("line %d: the key is not base64", n+1)}
		}
		keys = append(keys, Key{ID: id, Secret: secret})
	}
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	return keys, nil
}

// FormatKey returns the text form of k (a line of [ParseKeys]).
func FormatKey(k Key) string {
	return k.ID + " " + base64.StdEncoding.EncodeToString(k.Secret)
}

// checkKeys refuses an empty list, a bad ID, a key of the wrong length
// and an ID used twice.
func checkKeys(keys []Key) error {
	if len(keys) == 0 {
		return &KeyError{Err: ErrNoKeys}
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if err := checkKeyID(k.ID); err != nil {
			return err
		}
		if len(k.Secret) != KeySize {
			return &KeyError{KeyID: k.ID, Err: ErrKeyLength, Cause: fmt.Errorf("%d bytes, want %d (AES-256)", len(k.Secret), KeySize)}
		}
		if seen[k.ID] {
			return &KeyError{KeyID: k.ID, Err: ErrDuplicateKeyID}
		}
		seen[k.ID] = true
	}
	return nil
}

// checkKeyID refuses an empty or too long ID, and one with a space, a
// comma or a character that is not printable.
func checkKeyID(id string) error {
	if id == "" || len(id) > maxKeyIDLen {
		return &KeyError{KeyID: id, Err: ErrBadKeyID, Cause: fmt.Errorf("an ID is 1 to %d bytes", maxKeyIDLen)}
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || r == ',' || r == ':' {
			return &KeyError{KeyID: id, Err: ErrBadKeyID, Cause: fmt.Errorf("character %q", r)}
		}
	}
	return nil
}
