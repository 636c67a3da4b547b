package boltdb

import "go.etcd.io/bbolt"

// Test access to the internals (package boltdb_test uses them).

// HoldWriterLock takes bbolt's writer lock of st's file, so that the next
// commit waits; the returned func releases it.
func HoldWriterLock(st *State) func() {
	tx, err := st.store.db.Begin(true)
	if err != nil {
		panic(err)
	}
	return func() { _ = tx.Rollback() }
}

// Queued returns the number of writes in the open batch.
func Queued(st *State) int {
	st.store.mu.Lock()
	defer st.store.mu.Unlock()
	return len(st.store.open.changes)
}

// Committing returns the number of writes of the commit in progress (0
// when none is).
func Committing(st *State) int { return int(st.store.committing.Load()) }

// WithRotationHook makes the state call f after every batch a rotation
// committed, with the number of records it rewrote.
func WithRotationHook(f func(rewritten int)) Option {
	return func(o *options) { o.rotated = f }
}

// StoredBytes returns the total length of the records the file holds.
func StoredBytes(st *State) (n int, err error) {
	err = st.store.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(resourcesBucket).ForEach(func(_, v []byte) error {
			n += len(v)
			return nil
		})
	})
	return n, err
}
