package atrest

import (
	"crypto/aes"
	"crypto/cipher"
)

// KeySet is a checked list of keys, ready to seal and open records: the
// first key writes, every key reads. A nil *KeySet has no key.
type KeySet struct {
	ids   []string // in the provider's order: ids[0] writes
	aeads map[string]cipher.AEAD
	first cipher.AEAD
}

// newKeySet checks keys and makes their ciphers.
func newKeySet(keys []Key) (*KeySet, error) {
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	ks := &KeySet{aeads: make(map[string]cipher.AEAD, len(keys))}
	for _, k := range keys {
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, &KeyError{KeyID: k.ID, Err: ErrKeyLength, Cause: err}
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			return nil, &KeyError{KeyID: k.ID, Err: ErrKeyLength, Cause: err}
		}
		ks.ids = append(ks.ids, k.ID)
		ks.aeads[k.ID] = gcm
	}
	ks.first = ks.aeads[ks.ids[0]]
	return ks, nil
}

// IDs returns the IDs of the keys, the writing key's first.
func (ks *KeySet) IDs() []string {
	if ks == nil {
		return nil
	}
	return append([]string(nil), ks.ids...)
}

// WriteKeyID returns the ID of the key that writes ("" for no keys).
func (ks *KeySet) WriteKeyID() string {
	if ks == nil {
		return ""
	}
	return ks.ids[0]
}

// Has reports whether there is a key of ID id.
func (ks *KeySet) Has(id string) bool { return ks != nil && ks.aeads[id] != nil }

// Stale reports whether rec is not written with ks's writing key, so that
// a rotation to ks rewrites it: encrypted with another key, or not
// encrypted. A malformed record is stale (rewriting it fails, and names
// it). Nil keys find nothing stale.
func (ks *KeySet) Stale(rec []byte) bool {
	if ks == nil {
		return false
	}
	id, err := KeyID(rec)
	return err != nil || id != ks.ids[0]
}
