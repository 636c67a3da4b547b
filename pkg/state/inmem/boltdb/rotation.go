package boltdb

import (
	"bytes"
	"context"
	"errors"

	"go.etcd.io/bbolt"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// Key rotation (rule P3). Rotate loads the sealer's keys again, verifies
// them against the file's key checks and, in one transaction, keeps the
// check of the new writing key and marks the rotation under way (the
// "rotation" metadata key); then the sealer uses the new keys (every
// write from then on is under the new key), and the rotation rewrites
// every record that is not under it, a batch per transaction, in key
// order, in passes until a pass finds none (a write sealed under the old
// key just before the switch may commit behind the first pass), and
// removes the mark. Its transactions and the committer's are bbolt's
// writer transactions, one at a time: a rotation rewrites what the file
// holds when its transaction runs, and a write committed after it is
// newer. Every record is readable at every moment (under its old key or
// the new one); a crash leaves the mark, and the next Open resumes the
// rotation in the background.

// rotationState is the rotation side of a store.
type rotationState struct {
	// sem is held by the one rotation that runs.
	sem chan struct{}
	// life is canceled by close: a rotation stops between batches.
	life   context.Context
	cancel context.CancelFunc
	// bgDone is closed when the rotation resumed at Open ends, with
	// bgErr; nil when none was resumed.
	bgDone chan struct{}
	bgErr  error
	batch  int
	// rotated is told of every batch committed (tests).
	rotated func(rewritten int)
}

func newRotationState(o options) rotationState {
	life, cancel := context.WithCancel(context.Background())
	return rotationState{sem: make(chan struct{}, 1), life: life, cancel: cancel, batch: o.rotationBatch, rotated: o.rotated}
}

// Rotate rewrites every record of the file under the first key of the
// sealer's provider (see [atrest.KeyProvider]): it asks the provider for
// its keys again, so that a new key put first while the state runs
// writes from then on, and rewrites the records of older keys (and those
// not encrypted, with atrest.Config.ReadPlaintext) in batches of
// [WithRotationBatch] records per transaction, while the state serves
// reads and writes. It returns once every record is under the first key,
// or with ctx's error (or [ErrClosed]) when it was stopped: a rotation is
// safe to stop or to crash at any point — every record is readable
// throughout, and the next Rotate, or the next Open, resumes it.
//
// It fails, changing nothing, with a *atrest.KeyError when the provider
// fails or gives bad keys, when a key of the list is not the one that
// wrote under its ID in this file (atrest.ErrWrongKey), when the state has
// no key provider, and when every record is already under the first key
// and no rotation is under way (atrest.ErrNoNewKey: put the new key first
// in the provider's list). A record that does not open stops it with a
// [*FileError] of [ErrRecord] naming the record in strict mode; in lenient
// mode the record is left as it is and reported.
func (st *State) Rotate(ctx context.Context) error {
	s := st.store
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.rot.life, cancel)()
	select {
	case s.rot.sem <- struct{}{}:
		defer func() { <-s.rot.sem }()
	case <-ctx.Done():
		return s.stopped(ctx)
	}
	ks, err := s.sealer.LoadKeys(ctx)
	if err != nil {
		return err
	}
	if ks == nil {
		return &atrest.KeyError{Err: atrest.ErrNoKeys, Cause: errors.New("the state has no key provider (boltdb.WithSealer)")}
	}
	if err := s.db.Update(func(tx *bbolt.Tx) error { return s.beginRotation(tx, ks) }); err != nil {
		if s.rot.life.Err() != nil {
			return ErrClosed
		}
		return err
	}
	s.sealer.Use(ks)
	return s.rotate(ctx)
}

// stopped is the error of a rotation stopped by ctx or by close.
func (s *store) stopped(ctx context.Context) error {
	if s.rot.life.Err() != nil {
		return ErrClosed
	}
	return context.Cause(ctx)
}

// beginRotation verifies ks against the file's key checks, keeps the
// check of its writing key and marks the rotation under way; a rotation
// that would rewrite nothing is atrest.ErrNoNewKey.
func (s *store) beginRotation(tx *bbolt.Tx, ks *atrest.KeySet) error {
	meta, res := tx.Bucket(metaBucket), tx.Bucket(resourcesBucket)
	if err := ks.VerifyAll(func(id string) []byte { return meta.Get(keyCheckKey(id)) }); err != nil {
		return err
	}
	if meta.Get(rotationKey) == nil && !anyStale(res, ks) {
		return &atrest.KeyError{KeyID: ks.WriteKeyID(), Err: atrest.ErrNoNewKey}
	}
	if err := prepareSealing(meta, s.sealer, ks); err != nil {
		return err
	}
	return meta.Put(rotationKey, []byte(ks.WriteKeyID()))
}

// anyStale reports whether a record of res is not under ks's writing key.
func anyStale(res *bbolt.Bucket, ks *atrest.KeySet) bool {
	c := res.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if ks.Stale(v) {
			return true
		}
	}
	return false
}

// rotate rewrites the stale records in passes until one finds none, then
// removes the rotation's mark.
func (s *store) rotate(ctx context.Context) error {
	skipped := map[string]bool{} // records that do not open (lenient)
	for {
		n, err := s.rotatePass(ctx, skipped)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	return s.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(metaBucket).Delete(rotationKey) })
}

// rotatePass rewrites the stale records in key order, a batch per
// transaction, and returns how many it rewrote.
func (s *store) rotatePass(ctx context.Context, skipped map[string]bool) (int, error) {
	var after []byte
	total := 0
	for {
		if ctx.Err() != nil {
			return total, s.stopped(ctx)
		}
		var n int
		var done bool
		err := s.db.Update(func(tx *bbolt.Tx) error {
			var err error
			n, after, done, err = s.rotateBatch(tx, after, skipped)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		s.rotatedRecords.Add(uint64(n))
		if s.rot.rotated != nil && n > 0 {
			s.rot.rotated(n)
		}
		if done {
			return total, nil
		}
	}
}

// rotateBatch rewrites up to a batch of the stale records after key
// after, visiting at most 16 batches' worth of records, and returns how
// many it rewrote, the last key it visited, and whether it reached the
// end.
func (s *store) rotateBatch(tx *bbolt.Tx, after []byte, skipped map[string]bool) (int, []byte, bool, error) {
	c := tx.Bucket(resourcesBucket).Cursor()
	k, v := c.First()
	if after != nil {
		if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
			k, v = c.Next()
		}
	}
	var keys, values [][]byte
	for visited := 0; k != nil && len(keys) < s.rot.batch && visited < 16*s.rot.batch; k, v = c.Next() {
		visited++
		after = bytes.Clone(k)
		if skipped[string(k)] || !s.sealer.Stale(v) {
			continue
		}
		nv, err := s.reseal(k, v)
		if err != nil {
			if !s.sealer.Lenient() {
				return 0, nil, false, err
			}
			skipped[string(k)] = true
			s.sealer.Report(err)
			continue
		}
		keys, values = append(keys, after), append(values, nv)
	}
	res := tx.Bucket(resourcesBucket)
	for i := range keys {
		if err := res.Put(keys[i], values[i]); err != nil {
			return 0, nil, false, err
		}
	}
	return len(keys), after, k == nil, nil
}

// reseal rewrites the record v of key k under the writing key.
func (s *store) reseal(k, v []byte) ([]byte, error) {
	ns, typ, id, err := parseKey(k)
	if err != nil {
		return nil, &FileError{Path: s.db.Path(), Err: ErrRecord, Key: keyString(k), Cause: err}
	}
	nv, err := s.sealer.Reseal(ns, typ, id, v)
	if err != nil {
		return nil, &FileError{Path: s.db.Path(), Err: ErrRecord, Key: keyString(k), Cause: err}
	}
	return nv, nil
}

// resume resumes, in the background, a rotation a previous run left
// under way; close stops it.
func (s *store) resume() {
	s.rot.bgDone = make(chan struct{})
	s.rot.sem <- struct{}{} // free: nothing else runs yet
	go func() {
		defer close(s.rot.bgDone)
		defer func() { <-s.rot.sem }()
		s.rot.bgErr = s.rotate(s.rot.life)
	}()
}

// WaitRotation waits until the rotation that Open resumed (one a previous
// run left under way) has ended, and returns its error: nil when it
// completed, or when none was resumed; [ErrClosed] when Close stopped it
// (the next Open resumes it again). It returns ctx's error if ctx ends
// first.
func (st *State) WaitRotation(ctx context.Context) error {
	done := st.store.rot.bgDone
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return st.store.rot.bgErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// RecordsByKey returns how many records of the file are under each key
// ID; those not encrypted (and those that are not records) count under
// "". It reads the file (one read transaction): the progress of a
// rotation, and what keys the file still needs.
func (st *State) RecordsByKey() (map[string]int, error) {
	counts := map[string]int{}
	err := st.store.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(resourcesBucket).ForEach(func(_, v []byte) error {
			id, _ := atrest.KeyID(v)
			counts[id]++
			return nil
		})
	})
	return counts, err
}
