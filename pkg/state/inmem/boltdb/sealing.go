package boltdb

import (
	"context"
	"encoding/binary"
	"errors"
	"math"

	"go.etcd.io/bbolt"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// plainSealer is the sealer of a state opened without WithSealer: it
// stores records as encoded, reads compressed ones, and refuses encrypted
// ones naming their key.
func plainSealer() *atrest.Sealer {
	s, err := atrest.New(context.Background(), atrest.Config{})
	if err != nil {
		panic("boltdb: the plain sealer: " + err.Error()) // no provider: cannot fail
	}
	return s
}

// prepareSealing makes the file ready for records sealed with keys ks by
// sealer: in the sealed format when sealer frames records, and with the
// key check of ks's writing key (kept before any record is written with
// it). It runs in the transaction that starts a run, and in the one that
// starts a rotation.
func prepareSealing(meta *bbolt.Bucket, sealer *atrest.Sealer, ks *atrest.KeySet) error {
	if !sealer.Plain(math.MaxInt) || ks != nil {
		if f, _ := binary.Uvarint(meta.Get(formatKey)); f < sealedFormat {
			if err := meta.Put(formatKey, binary.AppendUvarint(nil, sealedFormat)); err != nil {
				return err
			}
		}
	}
	if ks == nil {
		return nil
	}
	key := keyCheckKey(ks.WriteKeyID())
	if meta.Get(key) != nil {
		return nil
	}
	check, err := ks.KeyCheck()
	if err != nil {
		return err
	}
	return meta.Put(key, check)
}

// recordProblem is what Open does with a stored record that does not open
// or decode: a record of a key the sealer lacks refuses the file (ErrKey,
// naming the key ID), in every mode; one that fails authentication, is
// malformed or is not encrypted where the state encrypts refuses it
// (ErrRecord) in strict mode, and is skipped and reported in lenient mode
// (nil); one that does not decode refuses it (ErrUndecodable).
func recordProblem(path string, sealer *atrest.Sealer, k []byte, err error) error {
	var re *atrest.RecordError
	if !errors.As(err, &re) {
		return &FileError{Path: path, Err: ErrUndecodable, Key: keyString(k), Cause: err}
	}
	if errors.Is(err, atrest.ErrKeyMissing) {
		return &FileError{Path: path, Err: ErrKey, Key: keyString(k), Cause: &atrest.KeyError{KeyID: re.KeyID, Err: atrest.ErrKeyMissing}}
	}
	fe := &FileError{Path: path, Err: ErrRecord, Key: keyString(k), Cause: err}
	if sealer.Lenient() {
		sealer.Report(fe)
		return nil
	}
	return fe
}
