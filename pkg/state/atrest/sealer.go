package atrest

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"sync/atomic"
)

// Config is what a [Sealer] does to the records of a store.
type Config struct {
	// Keys provides the encryption keys (see [KeyProvider]): the first
	// writes, every key reads. Nil: records are not encrypted.
	Keys KeyProvider
	// ReadPlaintext lets a Sealer that encrypts read records that are
	// not encrypted: to encrypt a store that was written without
	// encryption (its Rotate encrypts them). Without it, such a record
	// is refused with [ErrPlaintext], as anything not written with the
	// store's keys is.
	ReadPlaintext bool
	// CompressAbove: a record whose encoding is longer than this many
	// bytes is compressed with zstd (when that makes it shorter), before
	// it is encrypted. 0 compresses nothing. [DefaultCompressAbove] is a
	// threshold below which zstd rarely saves anything.
	CompressAbove int
	// Lenient makes a backend that opens a store skip the records that
	// do not open (they fail authentication, are malformed, or are not
	// encrypted) and give each error to Report, instead of refusing to
	// open (strict, the default). Report is required when Lenient is set.
	// A missing or wrong key refuses the store in both modes.
	Lenient bool
	Report  func(error)
}

// DefaultCompressAbove is a compression threshold for stores of small
// resources: an encoding of a few hundred bytes rarely shrinks by more
// than the frame zstd adds.
const DefaultCompressAbove = 512

// Sealer turns a resource's encoding into the record a store keeps, and
// back: it compresses and encrypts as its [Config] says. It is safe for
// concurrent use; [Sealer.Use] changes its keys while it is used.
type Sealer struct {
	cfg  Config
	keys atomic.Pointer[KeySet]
}

// New returns a Sealer for cfg, with the keys its provider gives now (see
// [Sealer.LoadKeys]). It fails with a [*KeyError] when the provider fails
// or its keys are bad (none, a key of the wrong length, two keys with one
// ID, a bad ID), and when cfg is lenient without a Report. A store
// verifies the keys against the key checks it keeps before it writes
// anything with them.
func New(ctx context.Context, cfg Config) (*Sealer, error) {
	if cfg.CompressAbove < 0 {
		return nil, errors.New("atrest: negative compression threshold")
	}
	if cfg.Lenient && cfg.Report == nil {
		return nil, errors.New("atrest: lenient mode needs a Report function for the records it skips")
	}
	s := &Sealer{cfg: cfg}
	ks, err := s.LoadKeys(ctx)
	if err != nil {
		return nil, err
	}
	s.Use(ks)
	return s, nil
}

// LoadKeys asks the provider for its keys, checks them, and returns them
// without using them: a store rotating its keys verifies them against its
// key checks ([KeySet.Verify]) and keeps the check of the new writing key
// before it makes the Sealer [Sealer.Use] them, so that nothing is ever
// written with a key it could not tell from a wrong one. It returns nil
// without a provider, and a [*KeyError] when the provider fails or gives
// bad keys.
func (s *Sealer) LoadKeys(ctx context.Context) (*KeySet, error) {
	if s.cfg.Keys == nil {
		return nil, nil
	}
	keys, err := s.cfg.Keys.Keys(ctx)
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			return nil, err
		}
		return nil, &KeyError{Err: ErrKeySource, Cause: err}
	}
	return newKeySet(keys)
}

// Use makes the Sealer write with ks's first key and read with all of
// its keys from now on. A nil ks is ignored.
func (s *Sealer) Use(ks *KeySet) {
	if ks != nil {
		s.keys.Store(ks)
	}
}

// Keys returns the keys the Sealer uses now (nil when it does not
// encrypt).
func (s *Sealer) Keys() *KeySet { return s.keys.Load() }

// Encrypts reports whether the Sealer encrypts (it has keys).
func (s *Sealer) Encrypts() bool { return s.keys.Load() != nil }

// WriteKeyID returns the ID of the key that writes ("" when the Sealer
// does not encrypt).
func (s *Sealer) WriteKeyID() string { return s.keys.Load().WriteKeyID() }

// HasKey reports whether the Sealer has a key of ID id.
func (s *Sealer) HasKey(id string) bool { return s.keys.Load().Has(id) }

// Lenient reports whether a store that opens skips the records that do
// not open (see [Config.Lenient]).
func (s *Sealer) Lenient() bool { return s.cfg.Lenient }

// Report gives err, a record that a lenient store skipped, to the
// Config's Report.
func (s *Sealer) Report(err error) {
	if s.cfg.Report != nil {
		s.cfg.Report(err)
	}
}

// Seal appends to dst the record to store for plain, the encoding of the
// resource ns/typ/id: compressed when it is longer than the threshold
// (and that makes it shorter), then encrypted with the first key with a
// fresh random nonce and the resource's namespace, type and ID as
// additional authenticated data. Without compression or encryption the
// record is plain itself. It fails only when the system's random source
// does.
func (s *Sealer) Seal(dst []byte, ns, typ, id string, plain []byte) ([]byte, error) {
	ks := s.keys.Load()
	compress := s.cfg.CompressAbove > 0 && len(plain) > s.cfg.CompressAbove
	if ks == nil && !compress {
		return append(dst, plain...), nil
	}
	start := len(dst)
	dst = append(dst, magic[:]...)
	dst = append(dst, 0) // flags, set below
	var flags byte
	if ks == nil {
		if dst, compress = appendCompressed(dst, plain); compress {
			dst[start+len(magic)] = flagZstd
			return dst, nil
		}
		return append(dst[:start], plain...), nil // zstd saved nothing
	}
	payload := plain
	if compress {
		var c []byte
		if c, compress = appendCompressed(nil, plain); compress {
			payload, flags = c, flagZstd
		}
	}
	flags |= flagAESGCM
	dst[start+len(magic)] = flags
	keyID := ks.ids[0]
	dst = appendString(dst, keyID)
	nonce := len(dst)
	dst = append(dst, make([]byte, nonceLen)...)
	if _, err := rand.Read(dst[nonce:]); err != nil {
		return dst[:start], fmt.Errorf("atrest: random nonce: %w", err)
	}
	aad := appendAAD(make([]byte, 0, 128), dst[start:nonce], ns, typ, id)
	return ks.first.Seal(dst, dst[nonce:nonce+nonceLen], payload, aad), nil
}

// Open appends to dst the encoding that rec, the stored record of the
// resource ns/typ/id, holds. A record that does not open is a
// [*RecordError] naming the resource and the record's key ID, and
// nothing is appended: an encrypted record of a key the Sealer lacks
// ([ErrKeyMissing]), one that fails authentication ([ErrAuthentication]:
// changed, copied from another resource's record, or not written by the
// key under its ID), a record that is not encrypted where the Sealer
// encrypts ([ErrPlaintext], unless [Config.ReadPlaintext]), and bytes
// that are not a record ([ErrMalformed]).
func (s *Sealer) Open(dst []byte, ns, typ, id string, rec []byte) ([]byte, error) {
	f, err := parse(rec)
	fail := func(problem, cause error) ([]byte, error) {
		return dst, &RecordError{Resource: resourceName(ns, typ, id), KeyID: f.keyID, Err: problem, Cause: cause}
	}
	if err != nil {
		return fail(ErrMalformed, err)
	}
	ks := s.keys.Load()
	if f.flags&flagAESGCM == 0 {
		if ks != nil && !s.cfg.ReadPlaintext {
			return fail(ErrPlaintext, nil)
		}
		if f.flags&flagZstd == 0 {
			return append(dst, f.body...), nil
		}
		out, err := appendDecompressed(dst, f.body)
		if err != nil {
			return fail(ErrMalformed, err)
		}
		return out, nil
	}
	var aead cipher.AEAD
	if ks != nil {
		aead = ks.aeads[f.keyID]
	}
	if aead == nil {
		return fail(ErrKeyMissing, nil)
	}
	aad := appendAAD(make([]byte, 0, 128), f.head, ns, typ, id)
	if f.flags&flagZstd == 0 {
		out, err := aead.Open(dst, f.nonce, f.body, aad)
		if err != nil {
			return fail(ErrAuthentication, nil)
		}
		return out, nil
	}
	payload, err := aead.Open(nil, f.nonce, f.body, aad)
	if err != nil {
		return fail(ErrAuthentication, nil)
	}
	out, err := appendDecompressed(dst, payload)
	if err != nil {
		return fail(ErrMalformed, err)
	}
	return out, nil
}

// KeyID returns the ID of the key rec was written with: "" for a record
// that is not encrypted. It does not open the record: malformed bytes
// are an error, a record whose key the Sealer lacks is not.
func KeyID(rec []byte) (string, error) {
	f, err := parse(rec)
	if err != nil {
		return "", err
	}
	return f.keyID, nil
}

// Stale reports whether rec is not written the way the Sealer writes
// now, so that a rotation rewrites it (see [KeySet.Stale]).
func (s *Sealer) Stale(rec []byte) bool { return s.keys.Load().Stale(rec) }

// Plain reports whether Seal stores an encoding of n bytes as it is (no
// encryption, and not above the compression threshold): a store may then
// skip the call.
func (s *Sealer) Plain(n int) bool {
	return s.keys.Load() == nil && (s.cfg.CompressAbove == 0 || n <= s.cfg.CompressAbove)
}

// Reseal returns rec, the record of ns/typ/id, rewritten as the Sealer
// writes now (see [Sealer.Stale]): opened, then sealed again with the
// first key and a fresh nonce. A record that does not open is the
// [*RecordError] of [Sealer.Open].
func (s *Sealer) Reseal(ns, typ, id string, rec []byte) ([]byte, error) {
	plain, err := s.Open(nil, ns, typ, id, rec)
	if err != nil {
		return nil, err
	}
	return s.Seal(nil, ns, typ, id, plain)
}
