package typed_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// pairSpec is a 16-byte plain spec, the benchmarks' (two ints).
type pairSpec struct{ Value, Index int }

type pairDef struct{}

func (pairDef) Definition() typed.Definition {
	return typed.Definition{Type: "Pairs.test.resgraph.dev", DefaultNamespace: "ns"}
}

type pair = typed.Resource[pairSpec, pairDef]

// bytesPerCopy returns the bytes allocated per DeepCopy of r, counted by
// the runtime over n copies on one P (as testing.AllocsPerRun counts
// allocations). What else the process allocates meanwhile (the runtime's
// own, a few objects) only adds to it.
func bytesPerCopy(r resource.Resource, n int) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sink := r.DeepCopy() // the plan's first use, outside the count
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		sink = r.DeepCopy()
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(sink)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

// TestAStoredResourceOfASixteenByteSpecIsEightyBytes: a typed resource
// is its metadata (64 bytes) and its spec, with no pointer to its copy
// plan: 80 bytes for a 16-byte spec, and a copy (what a state stores)
// is one allocation of the 80-byte size class, not 96.
func TestAStoredResourceOfASixteenByteSpecIsEightyBytes(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(resource.Metadata{}))
	require.Equal(t, uintptr(80), unsafe.Sizeof(pair{}))

	r := typed.NewDefault[pairSpec, pairDef]("p", pairSpec{Value: 1, Index: 2})
	r.Metadata().ReplaceOwner("ctrl") // an interned owner: no storage of its own
	r.Metadata().Freeze()
	var sink resource.Resource
	assert.Equal(t, 1.0, testing.AllocsPerRun(1000, func() { sink = r.DeepCopy() }), "one allocation per copy")
	_ = sink
	bytes := bytesPerCopy(r, 10_000)
	assert.GreaterOrEqual(t, bytes, 80.0)
	assert.Less(t, bytes, 88.0, "a copy is 80 bytes, not the 96-byte class")
	c := r.DeepCopy().(*pair)
	assert.Equal(t, pairSpec{Value: 1, Index: 2}, *c.TypedSpec())
	assert.True(t, c.Metadata().Equal(*r.Metadata()))
}
