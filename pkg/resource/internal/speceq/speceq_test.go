package speceq_test

import (
	"math"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource/internal/speceq"
)

type inner struct {
	Tags  []string
	Attrs map[string]int
	When  time.Time
}

type spec struct {
	N      int
	S      string
	F      float64
	B      []byte
	Ptr    *inner
	In     inner
	List   []inner
	Map    map[string]*inner
	Any    any
	Arr    [2]inner
	hidden []int
	when   time.Time
	whens  map[string]time.Time
}

type node struct {
	V    int
	Next *node
	Kids []*node
}

// TestEqual_NilAndEmptyAreEqual: a nil and an empty slice or map are equal
// at any depth (rule R1); a non-empty one is not equal to either.
func TestEqual_NilAndEmptyAreEqual(t *testing.T) {
	for name, pair := range map[string][2]any{
		"top slice":        {[]int(nil), []int{}},
		"top map":          {map[string]int(nil), map[string]int{}},
		"bytes":            {spec{B: nil}, spec{B: []byte{}}},
		"field":            {spec{In: inner{Tags: nil}}, spec{In: inner{Tags: []string{}}}},
		"behind a pointer": {spec{Ptr: &inner{Attrs: nil}}, spec{Ptr: &inner{Attrs: map[string]int{}}}},
		"in a slice":       {spec{List: []inner{{}}}, spec{List: []inner{{Tags: []string{}, Attrs: map[string]int{}}}}},
		"in a map":         {spec{Map: map[string]*inner{"a": {}}}, spec{Map: map[string]*inner{"a": {Tags: []string{}}}}},
		"in an interface":  {spec{Any: []int(nil)}, spec{Any: []int{}}},
		"in an array":      {spec{Arr: [2]inner{{}, {Tags: nil}}}, spec{Arr: [2]inner{{}, {Tags: []string{}}}}},
		"unexported":       {spec{hidden: nil}, spec{hidden: []int{}}},
	} {
		assert.True(t, speceq.Equal(pair[0], pair[1]), name)
		assert.True(t, speceq.Equal(pair[1], pair[0]), name+" (reversed)")
		assert.False(t, reflect.DeepEqual(pair[0], pair[1]), name+": the case must differ under reflect.DeepEqual")
	}
	assert.False(t, speceq.Equal([]int(nil), []int{0}))
	assert.False(t, speceq.Equal(map[string]int{}, map[string]int{"a": 0}))
	assert.False(t, speceq.Equal(spec{Ptr: nil}, spec{Ptr: &inner{}}), "a nil pointer is not a pointer to a zero value")
	assert.False(t, speceq.Equal(spec{Any: nil}, spec{Any: []int(nil)}), "a nil interface is not an interface holding a nil slice")
}

// TestEqual_TimesByInstant: time.Time values compare by instant, whatever
// their location and monotonic reading, at any depth, unexported fields
// included.
func TestEqual_TimesByInstant(t *testing.T) {
	now := time.Now() // has a monotonic reading
	utc := now.Round(0).UTC()
	zoned := now.In(time.FixedZone("X", 3600))
	assert.False(t, reflect.DeepEqual(now, utc), "the case must differ under reflect.DeepEqual")
	for name, pair := range map[string][2]any{
		"top":        {now, utc},
		"zone":       {utc, zoned},
		"field":      {inner{When: now}, inner{When: zoned}},
		"unexported": {spec{when: now}, spec{when: utc}},
		"map value":  {spec{Map: map[string]*inner{"a": {When: now}}}, spec{Map: map[string]*inner{"a": {When: utc}}}},
	} {
		assert.True(t, speceq.Equal(pair[0], pair[1]), name)
	}
	assert.False(t, speceq.Equal(inner{When: now}, inner{When: now.Add(1)}))
	// A time in a map reached through an unexported field cannot be read:
	// it compares as reflect.DeepEqual would.
	assert.True(t, speceq.Equal(spec{whens: map[string]time.Time{"a": utc}}, spec{whens: map[string]time.Time{"a": utc}}))
	assert.False(t, speceq.Equal(spec{whens: map[string]time.Time{"a": utc}}, spec{whens: map[string]time.Time{"a": utc.Add(1)}}))
}

// TestEqual_AsDeepEqualOtherwise: everything else compares as
// reflect.DeepEqual does.
func TestEqual_AsDeepEqualOtherwise(t *testing.T) {
	f := func() {}
	ch := make(chan int)
	x, y := 1, 1
	full := spec{N: 1, S: "s", F: 1.5, B: []byte("b"), Ptr: &inner{Tags: []string{"a"}}, List: []inner{{Attrs: map[string]int{"k": 1}}},
		Map: map[string]*inner{"m": {Tags: []string{"t"}}}, Any: 7, hidden: []int{1}}
	cases := []struct {
		a, b any
	}{
		{1, 1}, {1, 2}, {int64(1), 1}, {"a", "a"}, {"a", "b"},
		{math.NaN(), math.NaN()}, {0.0, math.Copysign(0, -1)},
		{complex(1, 2), complex(1, 2)}, {[2]int{1, 2}, [2]int{1, 3}},
		{full, full}, {full, spec{N: 1}},
		{spec{Any: 1}, spec{Any: int64(1)}},
		{spec{Any: &x}, spec{Any: &y}},
		{f, f}, {(func())(nil), (func())(nil)},
		{ch, ch}, {ch, make(chan int)},
		{unsafe.Pointer(&x), unsafe.Pointer(&x)}, {unsafe.Pointer(&x), unsafe.Pointer(&y)},
		{nil, nil}, {nil, 1},
		{[]*node{nil}, []*node{{}}},
		{map[string]int{"a": 1}, map[string]int{"b": 1}},
	}
	for _, c := range cases {
		assert.Equal(t, reflect.DeepEqual(c.a, c.b), speceq.Equal(c.a, c.b), "%#v vs %#v", c.a, c.b)
	}
	full2 := full
	full2.Ptr = &inner{Tags: []string{"b"}}
	assert.False(t, speceq.Equal(full, full2))
}

// TestEqual_Cycles: cyclic values terminate, and differences inside a
// cycle are found.
func TestEqual_Cycles(t *testing.T) {
	ring := func(v int) *node {
		a := &node{V: 1}
		b := &node{V: v, Next: a}
		a.Next = b
		a.Kids = []*node{a, b}
		return a
	}
	assert.True(t, speceq.Equal(ring(2), ring(2)))
	assert.False(t, speceq.Equal(ring(2), ring(3)))
	type m map[string]any
	ma, mb := m{}, m{}
	ma["self"], mb["self"] = ma, mb
	assert.True(t, speceq.Equal(ma, mb))
}

// TestEqualPointed: the typed entry point compares the pointees.
func TestEqualPointed(t *testing.T) {
	a := spec{In: inner{Tags: nil}, when: time.Unix(5, 0)}
	b := spec{In: inner{Tags: []string{}}, when: time.Unix(5, 0).UTC()}
	assert.True(t, speceq.EqualPointed(&a, &b))
	b.N = 1
	assert.False(t, speceq.EqualPointed(&a, &b))
}

func BenchmarkEqual(b *testing.B) {
	mk := func() spec {
		return spec{N: 1, S: "s", B: []byte("bytes"), Ptr: &inner{Tags: []string{"a", "b"}},
			List: []inner{{Attrs: map[string]int{"k": 1, "l": 2}}, {Tags: []string{"x"}}},
			Map:  map[string]*inner{"m": {Tags: []string{"t"}}}}
	}
	x, y := mk(), mk()
	b.Run("speceq", func(b *testing.B) {
		for b.Loop() {
			if !speceq.EqualPointed(&x, &y) {
				b.Fatal("unequal")
			}
		}
	})
	b.Run("reflect.DeepEqual", func(b *testing.B) {
		for b.Loop() {
			if !reflect.DeepEqual(any(x), any(y)) {
				b.Fatal("unequal")
			}
		}
	})
}
