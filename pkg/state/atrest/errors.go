package atrest

import (
	"errors"
	"strconv"
)

// The problems of keys, each in a [*KeyError] (test with errors.Is).
var (
	// ErrNoKeys: the provider gave no key.
	ErrNoKeys = errors.New("no key")
	// ErrKeyLength: a key that is not 32 bytes (AES-256).
	ErrKeyLength = errors.New("a key of the wrong length")
	// ErrDuplicateKeyID: two keys with one ID.
	ErrDuplicateKeyID = errors.New("two keys with one ID")
	// ErrBadKeyID: an ID that is empty, too long, or has a space, a comma,
	// a colon or a character that is not printable.
	ErrBadKeyID = errors.New("a bad key ID")
	// ErrKeySource: the provider failed (a file that does not read, an
	// unset environment variable).
	ErrKeySource = errors.New("the keys could not be read")
	// ErrKeyMissing: the store holds records (or a key check) written
	// with a key ID the provider does not give.
	ErrKeyMissing = errors.New("a key the store needs is missing")
	// ErrWrongKey: the provider gives a key under an ID the store knows,
	// but not the key that wrote under that ID (it fails the key check
	// the store keeps for it).
	ErrWrongKey = errors.New("not the key that wrote under this ID")
	// ErrNoNewKey: a rotation was asked for, but every record is already
	// written with the first key: put the new key first in the
	// provider's list.
	ErrNoNewKey = errors.New("rotation without a new key: every record is already under the first key; put the new key first")
)

// KeyError is an error about keys: the provider's list (no key, a key of
// the wrong length, two keys with one ID, a bad ID, a provider that
// failed), or a key the store needs (missing, or not the one that wrote),
// or a rotation without a new key. KeyID names the key when there is one;
// the key's bytes are never in an error.
type KeyError struct {
	KeyID string
	Err   error
	// Cause is what revealed the problem, when Err does not say it all.
	Cause error
}

func (e *KeyError) Error() string {
	s := "atrest: " + e.Err.Error()
	if e.KeyID != "" {
		s += ": key " + strconv.Quote(e.KeyID)
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the problem and its cause.
func (e *KeyError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// The problems of a stored record, each in a [*RecordError].
var (
	// ErrAuthentication: an encrypted record that fails authentication:
	// its bytes were changed, it was copied from another resource's
	// record (the resource's namespace, type and ID are authenticated),
	// or the key under its ID is not the one that wrote it.
	ErrAuthentication = errors.New("fails authentication")
	// ErrMalformed: bytes that are not a record of this format (a
	// truncated record, an unknown flag, a newer format version, a
	// compressed payload that does not decompress to its length).
	ErrMalformed = errors.New("malformed")
	// ErrPlaintext: a record that is not encrypted, read by a store that
	// encrypts (and does not read plaintext records, see
	// [Config.ReadPlaintext]): it was not written by this store's keys.
	ErrPlaintext = errors.New("not encrypted, in a store that encrypts")
)

// RecordError is the error of a stored record that does not open: it
// names the record's resource (as "type(namespace/id)") and the key ID
// the record carries, if any. Err is [ErrAuthentication], [ErrMalformed],
// [ErrPlaintext] or [ErrKeyMissing]. Nothing of the record's content is
// ever returned with it.
type RecordError struct {
	Resource string
	KeyID    string
	Err      error
	Cause    error
}

func (e *RecordError) Error() string {
	s := "atrest: record of " + e.Resource
	if e.KeyID != "" {
		s += " under key " + strconv.Quote(e.KeyID)
	}
	s += ": " + e.Err.Error()
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the problem and its cause.
func (e *RecordError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// IsRecordError reports whether err is or wraps a [*RecordError].
func IsRecordError(err error) bool {
	var re *RecordError
	return errors.As(err, &re)
}

// IsKeyError reports whether err is or wraps a [*KeyError].
func IsKeyError(err error) bool {
	var ke *KeyError
	return errors.As(err, &ke)
}

// resourceName formats a resource as resgraph does: type(namespace/id).
func resourceName(ns, typ, id string) string {
	return typ + "(" + ns + "/" + id + ")"
}
