package typed_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// identicalAfter copies spec, changes the copy with change, and reports
// whether the copy is still identical to the original.
func identicalAfter[S any](t *testing.T, spec S, change func(*S)) bool {
	t.Helper()
	orig := newShape(spec)
	c := orig.DeepCopy().(*typed.Resource[S, shapeDef])
	same, ok := orig.Identical(c)
	require.True(t, ok)
	require.True(t, same, "a copy is identical")
	change(c.TypedSpec())
	same, ok = orig.Identical(c)
	require.True(t, ok)
	back, _ := c.Identical(orig)
	require.Equal(t, same, back, "symmetric")
	return same
}

// TestIdentical_EveryChangeIsSeen: a copy of a spec of every shape is
// identical to it, and a change anywhere in the copy (a plain field, a
// byte of a slice, a string, a map entry added, removed or changed,
// through a pointer, an interface's value or type, nil made empty) makes
// it not identical.
func TestIdentical_EveryChangeIsSeen(t *testing.T) {
	changes := map[string]func(*everyShape){
		"N":                  func(s *everyShape) { s.N++ },
		"Name":               func(s *everyShape) { s.Name += "x" },
		"Nested[0][1]":       func(s *everyShape) { s.Nested[0][1] = "c" },
		"Nested[1] nil→{}":   func(s *everyShape) { s.Nested[1] = []string{} },
		"Nested len":         func(s *everyShape) { s.Nested = s.Nested[:2] },
		"MapSlices[one][0]":  func(s *everyShape) { s.MapSlices["one"][0] = 2 },
		"MapSlices added":    func(s *everyShape) { s.MapSlices["two"] = nil },
		"MapSlices replaced": func(s *everyShape) { delete(s.MapSlices, "nil"); s.MapSlices["other"] = nil },
		"Ptr.Xs[0]":          func(s *everyShape) { s.Ptr.Xs[0] = 4 },
		"Ptr nil":            func(s *everyShape) { s.Ptr = nil },
		"PtrPtr M":           func(s *everyShape) { (*s.PtrPtr).M["k"] = "w" },
		"Arr[2][1]":          func(s *everyShape) { s.Arr[2][1] = 7 },
		"PlainArr[1]":        func(s *everyShape) { s.PlainArr[1] = 9 },
		"Tags[0]":            func(s *everyShape) { s.Tags[0] = "u" },
		"inner.M":            func(s *everyShape) { s.inner.M = map[string]string{} },
		"priv[5]":            func(s *everyShape) { s.priv[5] = 'T' },
		"privMap[1].Xs":      func(s *everyShape) { s.privMap[1].Xs = append(s.privMap[1].Xs, 1) },
		"Any value":          func(s *everyShape) { s.Any.(*inner).Xs[0] = 0 },
		"Any type":           func(s *everyShape) { s.Any = 11 },
		"Err":                func(s *everyShape) { s.Err = errors.New("bang") },
		"When":               func(s *everyShape) { s.When = s.When.Add(time.Nanosecond) },
		"When location":      func(s *everyShape) { s.When = s.When.UTC() },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			assert.False(t, identicalAfter(t, fullShape(), change))
		})
	}
	assert.True(t, identicalAfter(t, fullShape(), func(s *everyShape) {
		s.Name = strings.Clone(s.Name)  // the same content elsewhere
		s.Nested[0] = s.Nested[0][:2:2] // capacity is not compared
		s.MapSlices["one"] = []int{1}   // an equal value, new memory
	}), "equal content in other memory is identical")
}

// TestIdentical_PlainValuesBitForBit: plain values compare bit for
// bit (a NaN is identical to itself, -0 is not 0), in bulk for byte
// slices and arrays, and struct padding is never compared.
func TestIdentical_PlainValuesBitForBit(t *testing.T) {
	type floats struct{ F float64 }
	assert.True(t, identicalAfter(t, floats{F: math.NaN()}, func(*floats) {}))
	assert.False(t, identicalAfter(t, floats{}, func(s *floats) { s.F = math.Copysign(0, -1) }))

	type payload struct {
		Data [64]byte
		Blob []byte
	}
	p := payload{Blob: make([]byte, 4096)}
	assert.False(t, identicalAfter(t, p, func(s *payload) { s.Data[63] = 1 }))
	assert.False(t, identicalAfter(t, p, func(s *payload) { s.Blob[4095] = 1 }))
	assert.False(t, identicalAfter(t, p, func(s *payload) { s.Blob = s.Blob[:4095] }))

	// B sits after 7 bytes of padding; an array of such structs is
	// compared element by element.
	type padded struct {
		A bool
		B int64
		C int16
	}
	type paddedSpec struct {
		P  padded
		Ps []padded
		Pa [3]padded
	}
	spec := paddedSpec{P: padded{A: true, B: 2, C: 3}, Ps: []padded{{B: 1}, {B: 2}}, Pa: [3]padded{{C: 1}}}
	assert.True(t, identicalAfter(t, spec, func(s *paddedSpec) {
		scribble(unsafe.Pointer(&s.P), 1, 7)
		scribble(unsafe.Pointer(&s.Ps[1]), 1, 7)
		scribble(unsafe.Pointer(&s.Pa[2]), 18, 6)
	}), "padding is not compared")
	assert.False(t, identicalAfter(t, spec, func(s *paddedSpec) { s.Ps[1].C = 9 }))
	assert.False(t, identicalAfter(t, spec, func(s *paddedSpec) { s.Pa[2].A = true }))
}

// scribble writes non-zero bytes over n bytes at off from p.
func scribble(p unsafe.Pointer, off, n uintptr) {
	for i := range n {
		*(*byte)(unsafe.Add(p, off+i)) = 0xAA
	}
}

// TestIdentical_CyclesEnd: recursive specs with cycles and shared
// pointers compare (and terminate); a change deep in the cycle is seen.
func TestIdentical_CyclesEnd(t *testing.T) {
	type graph struct {
		Root *node
		Any  any
	}
	build := func() graph {
		a := &node{Val: []int{1}}
		b := &node{Val: []int{2}, Next: a}
		a.Next = b
		a.Kids = []*node{b, b}
		return graph{Root: a, Any: a}
	}
	assert.True(t, identicalAfter(t, build(), func(*graph) {}))
	assert.False(t, identicalAfter(t, build(), func(g *graph) { g.Root.Next.Next.Kids[1].Val[0] = 3 }))
	assert.False(t, identicalAfter(t, build(), func(g *graph) { g.Any.(*node).Next.Val = nil }))
}

// TestIdentical_MetadataCompared: a change of the metadata (labels,
// annotations, finalizers, owner, version, phase, times) makes a copy not
// identical; the same labels in another map are identical.
func TestIdentical_MetadataCompared(t *testing.T) {
	orig := newShape(1)
	orig.Metadata().Labels().Set("k", "v")
	changes := map[string]func(md *resource.Metadata){
		"label":      func(md *resource.Metadata) { md.Labels().Set("k", "w") },
		"annotation": func(md *resource.Metadata) { md.Annotations().Set("a", "b") },
		"finalizer":  func(md *resource.Metadata) { md.Finalizers().Add("f") },
		"owner":      func(md *resource.Metadata) { _ = md.SetOwner("o") },
		"version":    func(md *resource.Metadata) { md.SetVersion(md.Version().Next()) },
		"phase":      func(md *resource.Metadata) { md.SetPhase(resource.PhaseTearingDown) },
		"updated":    func(md *resource.Metadata) { md.SetUpdated(time.Unix(1, 0)) },
	}
	for name, change := range changes {
		c := orig.DeepCopy()
		same, ok := orig.Identical(c)
		require.True(t, ok)
		require.True(t, same)
		change(c.Metadata())
		same, _ = orig.Identical(c)
		assert.False(t, same, name)
	}
	c := orig.DeepCopy()
	c.Metadata().Labels().Delete("k")
	c.Metadata().Labels().Set("k", "v")
	same, _ := orig.Identical(c)
	assert.True(t, same, "equal labels in another map")
}

// TestIdentical_OtherTypes: a resource of another type is not
// comparable (ok false); a resource is identical to itself.
func TestIdentical_OtherTypes(t *testing.T) {
	r := newShape(fullShape())
	_, ok := r.Identical(newShape(1))
	assert.False(t, ok)
	var untyped resource.Resource
	_, ok = r.Identical(untyped)
	assert.False(t, ok)
	same, ok := r.Identical(r)
	assert.True(t, ok)
	assert.True(t, same)
}
