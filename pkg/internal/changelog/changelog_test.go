package changelog_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	kindA = resource.KindOf(resource.NewKind("ns", "A"))
	kindB = resource.KindOf(resource.NewKind("ns", "B"))
)

// TestG3_ALogStartsFull: the first batch of a log is full (a Controller's
// first pass reads everything), the next holds what was added since.
func TestG3_ALogStartsFull(t *testing.T) {
	l := changelog.New(0)
	l.Add(kindA, "a1")
	b := l.Take(nil)
	require.True(t, b.Full)
	assert.Nil(t, b.IDs(kindA))

	l.Add(kindA, "a1")
	l.Add(kindB, "b1")
	l.Add(kindA, "a2")
	b = l.Take(b)
	require.False(t, b.Full)
	assert.Equal(t, []resource.ID{"a1", "a2"}, b.IDs(kindA))
	assert.Equal(t, []resource.ID{"b1"}, b.IDs(kindB))
	assert.Equal(t, 3, b.Len())

	b = l.Take(b)
	assert.False(t, b.Full)
	assert.Zero(t, b.Len(), "a batch holds what came after the previous one")
	assert.Nil(t, b.IDs(kindA))
}

// TestG3_AnOverflowingLogIsFull: past its limit the log forgets the IDs
// and its batch is full, until taken.
func TestG3_AnOverflowingLogIsFull(t *testing.T) {
	l := changelog.New(3)
	l.Take(nil)
	for _, id := range []resource.ID{"a1", "a2", "a3"} {
		l.Add(kindA, id)
	}
	b := l.Take(nil)
	require.False(t, b.Full, "at the limit: not full yet")
	assert.Len(t, b.IDs(kindA), 3)

	for _, id := range []resource.ID{"a1", "a2", "a3", "a4"} {
		l.Add(kindA, id)
	}
	b = l.Take(b)
	assert.True(t, b.Full, "past the limit: full")
	assert.Nil(t, b.IDs(kindA))
	l.Add(kindA, "a5")
	b = l.Take(b)
	assert.False(t, b.Full)
	assert.Equal(t, []resource.ID{"a5"}, b.IDs(kindA))
}

// TestG3_ASizedLogHoldsWhatItsControllerAskedFor: SetLimit (a
// Controller's changelog.Sizer) raises the limit past which the log
// overflows, and never lowers it below the limit New set.
func TestG3_ASizedLogHoldsWhatItsControllerAskedFor(t *testing.T) {
	l := changelog.New(2)
	l.Take(nil)
	l.SetLimit(5)
	for _, id := range []resource.ID{"a1", "a2", "a3", "a4", "a5"} {
		l.Add(kindA, id)
	}
	b := l.Take(nil)
	require.False(t, b.Full, "5 IDs in a log sized for 5")
	assert.Len(t, b.IDs(kindA), 5)

	for _, id := range []resource.ID{"a1", "a2", "a3", "a4", "a5", "a6"} {
		l.Add(kindA, id)
	}
	assert.True(t, l.Take(b).Full, "past the size asked for: full")

	l.SetLimit(1) // below New's limit: New's limit holds
	l.Add(kindA, "a1")
	l.Add(kindA, "a2")
	b = l.Take(nil)
	require.False(t, b.Full, "New's limit is kept")
	assert.Len(t, b.IDs(kindA), 2)
	l.Add(kindA, "a1")
	l.Add(kindA, "a2")
	l.Add(kindA, "a3")
	assert.True(t, l.Take(b).Full)
}

// TestG3_MarkFullMakesTheNextBatchFull: a (re)start or a re-list marks the
// log full.
func TestG3_MarkFullMakesTheNextBatchFull(t *testing.T) {
	l := changelog.New(0)
	l.Take(nil)
	l.Add(kindA, "a1")
	l.MarkFull()
	l.Add(kindA, "a2")
	assert.True(t, l.Take(nil).Full)
}

// TestLogConcurrentAddAndTake: every ID added is in exactly one batch
// taken (go test -race).
func TestLogConcurrentAddAndTake(t *testing.T) {
	l := changelog.New(1 << 20)
	l.Take(nil)
	const n = 10000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range n {
			l.Add(kindA, "x")
		}
	}()
	seen := 0
	var b *changelog.Batch
	for seen < n {
		b = l.Take(b)
		require.False(t, b.Full)
		seen += len(b.IDs(kindA))
	}
	wg.Wait()
	assert.Equal(t, n, seen)
	assert.Zero(t, l.Take(b).Len())
}

// fill adds ids to l and takes the batch, handing back b.
func fill(l *changelog.Log, b *changelog.Batch, ids []resource.ID) *changelog.Batch {
	for _, id := range ids {
		l.Add(kindA, id)
	}
	return l.Take(b)
}

func manyIDs(n int) []resource.ID {
	ids := make([]resource.ID, n)
	for i := range ids {
		ids[i] = resource.ID(fmt.Sprintf("a%06d", i))
	}
	return ids
}

// TestABatchReusesTheStorageOfItsPreviousUse: batches of 10k changes, one
// after another, reuse the ID storage of the batch handed back: once both
// batches of the log grew, a batch of the same size allocates nothing.
func TestABatchReusesTheStorageOfItsPreviousUse(t *testing.T) {
	l := changelog.New(20_000)
	ids := manyIDs(10_000)
	b := l.Take(nil)
	b = fill(l, b, ids)
	b = fill(l, b, ids) // both batches have grown
	allocs := testing.AllocsPerRun(5, func() { b = fill(l, b, ids) })
	assert.Zero(t, allocs, "a batch as large as the previous one reuses its storage")
	assert.Len(t, b.IDs(kindA), len(ids))
}

// TestABatchReleasesTheStorageOfABurstThatIsOver: a batch handed back
// having used less than a quarter of a large storage releases it, so a
// log that had a burst holds no burst-sized storage once changes are few.
func TestABatchReleasesTheStorageOfABurstThatIsOver(t *testing.T) {
	l := changelog.New(20_000)
	b := l.Take(nil)
	b = fill(l, b, manyIDs(10_000))
	b = fill(l, b, manyIDs(10_000))
	few := manyIDs(10)
	for range 4 { // each batch used once for few IDs, handed back, reused
		b = fill(l, b, few)
	}
	assert.Len(t, b.IDs(kindA), len(few))
	assert.LessOrEqual(t, cap(b.IDs(kindA)), 4096, "the burst's storage is released")
}
