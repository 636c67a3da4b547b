package boltdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state/atrest"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// TestP3_RotationWithoutANewKeyRefused: a rotation when every record is
// already under the first key, and one of a state without a key
// provider, are refused, changing nothing.
func TestP3_RotationWithoutANewKeyRefused(t *testing.T) {
	keys := []atrest.Key{newKey("k1")}
	st := open(t, dbPath(t), boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	writePairs(t, st, 3)
	err := st.Rotate(testContext(t))
	require.ErrorIs(t, err, atrest.ErrNoNewKey)
	assert.ErrorContains(t, err, `"k1"`)
	assert.Zero(t, st.Stats().Rotated)

	plain := open(t, dbPath(t))
	assert.ErrorIs(t, plain.Rotate(testContext(t)), atrest.ErrNoKeys)
}

// TestP3_RotationToAWrongKeyListRefused: a new list that gives another
// key under an ID the file knows is refused before anything is written
// with it; the old key writes on.
func TestP3_RotationToAWrongKeyListRefused(t *testing.T) {
	k1 := newKey("k1")
	keys := []atrest.Key{k1}
	st := open(t, dbPath(t), boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	writePairs(t, st, 3)
	keys = []atrest.Key{newKey("k2"), newKey("k1")}
	err := st.Rotate(testContext(t))
	require.ErrorIs(t, err, atrest.ErrWrongKey)
	assert.ErrorContains(t, err, `"k1"`)
	require.NoError(t, st.Create(testContext(t), newPair("after", 1)))
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k1": 4}, byKey)
}

// TestP3_InterruptedRotationResumesAtOpen: a rotation stopped after its
// first batch leaves records under both keys, all readable; the next
// Open resumes it in the background, and it completes.
func TestP3_InterruptedRotationResumesAtOpen(t *testing.T) {
	const n = 40
	k1, k2 := newKey("k1"), newKey("k2")
	keys := []atrest.Key{k1}
	path := dbPath(t)
	ctx, cancel := context.WithCancel(testContext(t))
	st := open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)), boltdb.WithRotationBatch(8),
		boltdb.WithRotationHook(func(int) { cancel() }))
	writePairs(t, st, n)
	keys = []atrest.Key{k2, k1}
	require.ErrorIs(t, st.Rotate(ctx), context.Canceled)
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k1": n - 8, "k2": 8}, byKey)
	require.NoError(t, st.Close())

	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	checkPairs(t, st, n)
	require.NoError(t, st.WaitRotation(testContext(t)))
	byKey, err = st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k2": n}, byKey)
	require.NoError(t, st.Close())

	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &[]atrest.Key{k2})))
	checkPairs(t, st, n)
	require.NoError(t, st.WaitRotation(testContext(t)), "nothing to resume")
}

// TestP3_CloseStopsAResumedRotation: Close stops a rotation Open resumed;
// WaitRotation says so, and the next Open resumes it again.
func TestP3_CloseStopsAResumedRotation(t *testing.T) {
	const n = 40
	k1, k2 := newKey("k1"), newKey("k2")
	keys := []atrest.Key{k1}
	path := dbPath(t)
	ctx, cancel := context.WithCancel(testContext(t))
	st := open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)), boltdb.WithRotationBatch(4),
		boltdb.WithRotationHook(func(int) { cancel() }))
	writePairs(t, st, n)
	keys = []atrest.Key{k2, k1}
	require.ErrorIs(t, st.Rotate(ctx), context.Canceled)
	require.NoError(t, st.Close())

	release := make(chan struct{})
	st, err := boltdb.Open(path, registry(), boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)), boltdb.WithRotationBatch(4),
		boltdb.WithRotationHook(func(int) { <-release }))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- st.Close() }()
	close(release)
	require.NoError(t, <-done)
	err = st.WaitRotation(testContext(t))
	if err != nil {
		assert.ErrorIs(t, err, boltdb.ErrClosed)
	}
	assert.ErrorIs(t, st.Rotate(testContext(t)), boltdb.ErrClosed)

	st = open(t, path, boltdb.WithSealer(sealer(t, atrest.Config{}, &keys)))
	require.NoError(t, st.WaitRotation(testContext(t)))
	byKey, err := st.RecordsByKey()
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"k2": n}, byKey)
}
