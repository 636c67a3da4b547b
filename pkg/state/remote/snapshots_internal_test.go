package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/internal/backend"
)

// TestSnapshots_ALoneWatchKeepsOneVersion: the client keeps the newest
// version of each resource for a kind with one watch, and the one before
// it too while the kind has more (and no longer once it has one again).
func TestSnapshots_ALoneWatchKeepsOneVersion(t *testing.T) {
	s := newSnapshots()
	kind := resource.KindOf(resource.NewKind("ns", "T"))
	v1, v2, v3 := backend.PointerOnly(resource.NewPointer("ns", "T", "a")), backend.PointerOnly(resource.NewPointer("ns", "T", "b")), backend.PointerOnly(resource.NewPointer("ns", "T", "c"))
	ks := s.acquire(kind)
	ks.store("a", snapKey{version: 1}, v1)
	ks.store("a", snapKey{version: 2}, v2)
	assert.Nil(t, ks.lookup("a", snapKey{version: 1}), "a lone watch: the older version is not kept")
	assert.Equal(t, v2, ks.lookup("a", snapKey{version: 2}))

	other := s.acquire(kind)
	assert.Same(t, ks, other)
	ks.store("a", snapKey{version: 3}, v3)
	assert.Equal(t, v2, ks.lookup("a", snapKey{version: 2}), "two watches: the version before the newest is kept")
	assert.Equal(t, v3, ks.lookup("a", snapKey{version: 3}))
	s.release(kind, other)
	assert.Nil(t, ks.lookup("a", snapKey{version: 2}), "one watch left: the version before the newest goes")
	assert.Nil(t, ks.prev)
	assert.Equal(t, v3, ks.lookup("a", snapKey{version: 3}))
	s.release(kind, ks)
	assert.Empty(t, s.kinds, "the kind's table goes with its last watch")
}
