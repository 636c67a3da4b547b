package atrest

import (
	"crypto/rand"
	"errors"
	"fmt"
)

// errMalformedCheck: a key check that is not one.
var errMalformedCheck = errors.New("the key check is malformed")

// Key checks. A store keeps, beside its records, one key check per key ID
// it has written with: a record of no resource, sealed with the key. When
// the store opens, each key the provider gives under a known ID must open
// its check; so a wrong key is told apart from a damaged record
// ([ErrWrongKey], naming the ID, before any record is read), and a store
// that holds records of an ID the provider lacks is refused
// ([ErrKeyMissing]).

// checkName is the resource name the key checks are sealed under: no
// resource has an empty namespace, so no record can be taken for a check.
const checkName = "resgraph key check"

// KeyCheck returns the key check of ks's writing key, for the store to
// keep under its ID ([KeySet.WriteKeyID]); nil for nil keys.
func (ks *KeySet) KeyCheck() ([]byte, error) {
	if ks == nil {
		return nil, nil
	}
	plain := []byte(checkName)
	rec := append(append([]byte(nil), magic[:]...), flagAESGCM)
	rec = appendString(rec, ks.ids[0])
	nonce := len(rec)
	rec = append(rec, make([]byte, nonceLen)...)
	if _, err := rand.Read(rec[nonce:]); err != nil {
		return nil, fmt.Errorf("atrest: random nonce: %w", err)
	}
	aad := appendAAD(nil, rec[:nonce], "", checkName, "")
	return ks.first.Seal(rec, rec[nonce:], plain, aad), nil
}

// Verify checks that ks's key of ID id is the one that wrote check, the
// key check a store kept for id: nil if it is, a [*KeyError] naming id
// otherwise — [ErrKeyMissing] when ks has no key of that ID, [ErrWrongKey]
// when its key does not open the check.
func (ks *KeySet) Verify(id string, check []byte) error {
	if !ks.Has(id) {
		return &KeyError{KeyID: id, Err: ErrKeyMissing}
	}
	f, err := parse(check)
	if err != nil || f.keyID != id || f.flags != flagAESGCM {
		return &KeyError{KeyID: id, Err: ErrWrongKey, Cause: errMalformedCheck}
	}
	aad := appendAAD(nil, f.head, "", checkName, "")
	if _, err := ks.aeads[id].Open(nil, f.nonce, f.body, aad); err != nil {
		return &KeyError{KeyID: id, Err: ErrWrongKey}
	}
	return nil
}

// VerifyAll verifies each key of ks whose ID has a key check (checks
// returns nil for an ID without one), and returns the first error.
func (ks *KeySet) VerifyAll(checks func(id string) []byte) error {
	if ks == nil {
		return nil
	}
	for _, id := range ks.ids {
		if c := checks(id); c != nil {
			if err := ks.Verify(id, c); err != nil {
				return err
			}
		}
	}
	return nil
}
