package cache

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// fixedRevisions is a state.RevisionReporter whose answers the test sets.
type fixedRevisions struct{ last, at uint64 }

func (f *fixedRevisions) Revision(context.Context) (uint64, error) { return f.at, nil }
func (f *fixedRevisions) KindRevision(context.Context, resource.Kind) (uint64, uint64, error) {
	return f.last, f.at, nil
}

func numberedKind(t *testing.T) *Kind {
	t.Helper()
	c := NewSet([]resource.Kind{itemKind}).WithRevisions(&fixedRevisions{}).Get(resource.KindOf(itemKind))
	require.True(t, c.Numbered())
	return c
}

func created(r resource.Resource, rev uint64) state.Event {
	return state.Event{Type: state.Created, Resource: r, Revision: rev}
}

// TestRevision_ServesOnlyAtTheFloor: a numbered cache serves a read only
// when it is at the revision the read needs, and reports the revision of
// the batch it holds; a re-list's partial batches serve nothing.
func TestRevision_ServesOnlyAtTheFloor(t *testing.T) {
	c := numberedKind(t)
	a := newItem("a", 1, 1, "", "", 1)
	c.ApplyBatch([]state.Event{created(a, 5)}, []*resource.Metadata{a.Metadata()}, 5, true)
	c.MarkReady()

	var rev uint64
	r, served, err := c.GetAt(a.Metadata(), []state.GetOption{state.WithGetRevision(&rev)}, 5)
	require.NoError(t, err)
	require.True(t, served)
	assert.Equal(t, 1, r.(*item).TypedSpec().N)
	assert.Equal(t, uint64(5), rev)

	_, served, _ = c.GetAt(a.Metadata(), nil, 6)
	assert.False(t, served, "the cache is at 5: a read that needs 6 goes to the state")
	_, served, _ = c.ListAt(nil, 6)
	assert.False(t, served)

	b := newItem("b", 2, 1, "", "", 2)
	c.ApplyBatch([]state.Event{created(b, 7)}, []*resource.Metadata{b.Metadata()}, 7, false)
	_, served, _ = c.ListAt(nil, 0)
	assert.False(t, served, "mid-relist contents are at no revision")
	c.ApplyBatch(nil, nil, 8, true)
	l, served, err := c.ListAt([]state.ListOption{state.WithListRevision(&rev)}, 6)
	require.NoError(t, err)
	require.True(t, served)
	assert.Len(t, l.Items, 2)
	assert.Equal(t, uint64(8), rev)
}

// TestRevision_VerifyOnlyWhenTheCacheHasTheKindsNewestChange: the state's
// word that the kind has no change after the cache's revision lets the
// cache serve later revisions; a kind change the cache lacks does not.
func TestRevision_VerifyOnlyWhenTheCacheHasTheKindsNewestChange(t *testing.T) {
	c := numberedKind(t)
	a := newItem("a", 1, 1, "", "", 1)
	c.ApplyBatch([]state.Event{created(a, 5)}, []*resource.Metadata{a.Metadata()}, 5, true)
	c.MarkReady()

	c.Verify(9, 12) // the kind changed at 9: the cache (at 5) lacks it
	_, served, _ := c.GetAt(a.Metadata(), nil, 10)
	assert.False(t, served)

	c.Verify(5, 12) // nothing after 5 up to 12
	var rev uint64
	_, served, _ = c.GetAt(a.Metadata(), []state.GetOption{state.WithGetRevision(&rev)}, 10)
	assert.True(t, served)
	assert.Equal(t, uint64(12), rev)
	_, served, _ = c.GetAt(a.Metadata(), nil, 13)
	assert.False(t, served, "verified up to 12 only")
}

// TestRevision_FloorOnlyGrows: a Floor keeps the highest revision raised.
func TestRevision_FloorOnlyGrows(t *testing.T) {
	var f Floor
	f.Raise(4)
	f.Raise(2)
	assert.Equal(t, uint64(4), f.Load())
	var nilFloor *Floor
	nilFloor.Raise(3)
	assert.Zero(t, nilFloor.Load())
}
