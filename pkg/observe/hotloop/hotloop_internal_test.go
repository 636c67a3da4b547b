package hotloop

import (
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// TestAResourceWhoseHashIsAnothersIsNotCountedAsIt: the detector's maps
// are keyed by a hash of the resource (see hashKey); a resource whose
// hash is that of a resource with a stat is not counted in that stat, its
// version is not taken for the other's, and the other's stat stays.
func TestAResourceWhoseHashIsAnothersIsNotCountedAsIt(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	d := New(Config{})
	x := trace.Ref{Namespace: "ns", Type: "X", ID: "x", Version: 1}
	commit := func(r trace.Ref, v uint64) {
		r.Version = v
		d.Observe(&trace.Record{Time: t0, Type: trace.Commit, Controller: "C", Resource: r,
			Cause: trace.Ref{Namespace: "ns", Type: "W", ID: "w", Version: v, Writer: "W"}})
	}
	commit(x, 1)
	commit(x, 2)
	commit(x, 3) // x now has a stat
	kx := d.keyOf(&x, &lastKind{})
	s := d.res[d.hashOf(kx)]
	require.NotNil(t, s)
	require.Equal(t, kx, s.key)

	// y collides with x: its key's hash is x's.
	y := trace.Ref{Namespace: "ns", Type: "X", ID: "y"}
	ky := d.keyOf(&y, &lastKind{})
	d.res[d.hashOf(ky)] = s
	commit(y, 7)
	assert.Same(t, s, d.res[d.hashOf(kx)], "x's stat stays")
	assert.Equal(t, kx, s.key)
	assert.Equal(t, 3, s.total(d.nameIdx["C"]), "y's commit is not counted as x's")
	assert.Empty(t, d.writerOf(ky, 2), "x's version is not y's")
	assert.Equal(t, "C", d.writerOf(kx, 2))
}

// TestAStatHoldsNoControllerName: a resource's stat names controllers by
// their index in the detector's names, so that the only pointers the
// collector scans in it are its key's ID and its counts, and it fits the
// 192-byte size class.
func TestAStatHoldsNoControllerName(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(resStat{}), uintptr(192))
	d := New(Config{})
	x := trace.Ref{Namespace: "ns", Type: "X", ID: "x"}
	for v := uint64(1); v <= 3; v++ {
		x.Version = v
		d.Observe(&trace.Record{Time: time.Unix(0, 0), Type: trace.Commit, Controller: "C", Resource: x,
			Cause: trace.Ref{Namespace: "ns", Type: "W", ID: "w", Version: v, Writer: "W"}})
	}
	s := d.res[d.hashOf(d.keyOf(&x, &lastKind{}))]
	require.NotNil(t, s)
	assert.Equal(t, "C", d.names[s.recent[0].writer])
	assert.Equal(t, []count{{writer: 0, reader: d.nameIdx["C"], n: 3}, {writer: d.nameIdx["W"], reader: d.nameIdx["C"], n: 3}}, s.counts)
	assert.Equal(t, "C", d.writerOf(d.keyOf(&x, &lastKind{}), 2))
}
