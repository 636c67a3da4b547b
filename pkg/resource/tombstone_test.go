package resource_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
)

// TestTombstone: a tombstone carries the pointer only, copies to a
// tombstone, and is told apart by IsTombstone (also for a backend's own
// type with the marker method), never by its fields.
func TestTombstone(t *testing.T) {
	ts := resource.NewTombstone(resource.NewPointer("ns", "T", "a"))
	assert.True(t, resource.IsTombstone(ts))
	assert.Equal(t, "T(ns/a)", resource.PointerString(ts.Metadata()))
	assert.Equal(t, resource.VersionUndefined, ts.Metadata().Version())
	assert.Nil(t, ts.Spec())
	assert.Equal(t, "tombstone(T(ns/a))", ts.String())
	cp := ts.DeepCopy()
	assert.True(t, resource.IsTombstone(cp))
	assert.NotSame(t, ts, cp)
	assert.True(t, resource.Equal(ts, cp))

	md := resource.NewMetadata("ns", "T", "a", resource.VersionUndefined)
	assert.False(t, resource.IsTombstone(&plain{md: md}), "a resource with the same metadata is no tombstone")
	assert.False(t, resource.IsTombstone(nil))
	assert.True(t, resource.IsTombstone(&ownTombstone{plain{md: md}}))
}

type ownTombstone struct{ plain }

func (*ownTombstone) Tombstone() {}
