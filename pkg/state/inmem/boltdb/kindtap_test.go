package boltdb_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
)

// commits is a kindtap.Tap that keeps the IDs it saw committed.
type commits struct {
	mu  sync.Mutex
	ids []string
}

func (c *commits) Committed(_ uint64, old, new resource.Resource, _ int64) {
	r := new
	if r == nil {
		r = old
	}
	c.mu.Lock()
	c.ids = append(c.ids, r.Metadata().ID())
	c.mu.Unlock()
}

// TestRC11_AFileTapsItsKindsCommits (recording rule RC11 over a bbolt
// file): the inmem state the file persists taps a kind's commits, so a
// flight recorder over the file needs no watch of it; the tap sees each
// change committed while it is set, of its kind only.
func TestRC11_AFileTapsItsKindsCommits(t *testing.T) {
	ctx := t.Context()
	st := openFast(t, t.TempDir())
	tapper, ok := any(st).(kindtap.Tapper)
	require.True(t, ok, "a bbolt state can tap a kind's commits")
	var seen commits
	remove, err := tapper.TapKind(resource.NewKind("a", conformance.IntResourceType), &seen)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("a", "x", 1)))
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("b", "y", 1)))
	require.NoError(t, st.Destroy(ctx, resource.NewPointer("a", conformance.IntResourceType, "x")))
	remove()
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("a", "z", 1)))
	assert.Equal(t, []string{"x", "x"}, seen.ids, "the kind's commits while tapped")
}
