package boltdb_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state"
)

// holder is a state.SnapshotHolder that takes no report on.
type holder string

func (h holder) HolderName() string             { return string(h) }
func (h holder) SnapshotChanged(err error) bool { return false }

// TestOptionalInterfaces_AnsweredAsTheInmemStateDoes: a bbolt state
// numbers its changes (the Runtime's revision-served cached reads), reports
// where a kind's history stands (WaitIdle's exact quiescence) and tracks
// the snapshots it hands out (the mutation detector naming the holder of a
// changed snapshot), as the inmem state it persists does.
func TestOptionalInterfaces_AnsweredAsTheInmemStateDoes(t *testing.T) {
	st := open(t, dbPath(t))
	ctx := testContext(t)

	var revs state.RevisionReporter = st
	before, err := revs.Revision(ctx)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	after, err := revs.Revision(ctx)
	require.NoError(t, err)
	assert.Greater(t, after, before, "a change gets a revision")
	last, at, err := revs.KindRevision(ctx, testKind)
	require.NoError(t, err)
	assert.Equal(t, after, last, "the kind's newest change")
	assert.GreaterOrEqual(t, at, last)

	var heads state.KindHeadReporter = st
	head, err := heads.KindHead(ctx, testKind)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newPair("b", 1)))
	moved, err := heads.KindHead(ctx, testKind)
	require.NoError(t, err)
	assert.NotEqual(t, head, moved, "the head moves with a change")

	var tr state.SnapshotTracker = st
	require.True(t, tr.TracksSnapshots(), "the mutation detector is on in test binaries")
	// Nothing is written from here on: the file's writer has nothing of
	// the snapshot to encode while the test changes it.
	require.NoError(t, st.Close())
	snap, err := st.Get(ctx, ptr("a"), state.WithReadOnlyGet())
	require.NoError(t, err)
	tr.HandedTo(holder("culprit"), snap)
	assert.Empty(t, tr.CheckHanded(holder("culprit"), snap), "nothing changed")
	snap.(*pair).TypedSpec().A = 100
	errs := tr.CheckHanded(holder("culprit"), snap)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "handed to culprit")
}
