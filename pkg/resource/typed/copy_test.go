package typed_test

import (
	"errors"
	"net/netip"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type shapeDef struct{}

func (shapeDef) Definition() typed.Definition {
	return typed.Definition{Type: "Shapes.test.resgraph.dev", DefaultNamespace: "default"}
}

func newShape[S any](spec S) *typed.Resource[S, shapeDef] {
	return typed.NewDefault[S, shapeDef]("x", spec)
}

// copySpec deep-copies a spec through a typed resource.
func copySpec[S any](t *testing.T, spec S) S {
	t.Helper()
	c, ok := newShape(spec).DeepCopy().(*typed.Resource[S, shapeDef])
	require.True(t, ok)
	return *c.TypedSpec()
}

// references collects the addresses of every reference (pointer, slice
// array, map) reachable from v, except map keys and time.Time's location.
func references(v reflect.Value, into map[uintptr]string, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type() == reflect.TypeFor[*time.Location]() {
			return
		}
		if _, seen := into[v.Pointer()]; seen {
			return
		}
		into[v.Pointer()] = path
		references(v.Elem(), into, "(*"+path+")")
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		into[v.Pointer()] = path
		for i := range v.Len() {
			references(v.Index(i), into, path+"[i]")
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		into[v.Pointer()] = path
		it := v.MapRange()
		for it.Next() {
			references(it.Value(), into, path+"[k]")
		}
	case reflect.Array:
		for i := range v.Len() {
			references(v.Index(i), into, path+"[i]")
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			references(v.Field(i), into, path+"."+v.Type().Field(i).Name)
		}
	case reflect.Interface:
		if !v.IsNil() {
			references(v.Elem(), into, path+"(iface)")
		}
	}
}

// assertIndependent checks rule R2 on a spec: the copy is deeply equal to
// the original, and no reference of the copy is one of the original's.
func assertIndependent[S any](t *testing.T, spec S) S {
	t.Helper()
	c := copySpec(t, spec)
	assert.True(t, reflect.DeepEqual(spec, c), "copy deeply equal")
	orig, cp := map[uintptr]string{}, map[uintptr]string{}
	references(reflect.ValueOf(&spec).Elem(), orig, "spec")
	references(reflect.ValueOf(&c).Elem(), cp, "spec")
	for addr, path := range cp {
		if o, shared := orig[addr]; shared {
			t.Errorf("copy's %s shares memory with the original's %s", path, o)
		}
	}
	return c
}

type inner struct {
	Xs []int
	M  map[string]string
}

type embedded struct {
	Tags []string
}

type everyShape struct {
	Nested    [][]string
	MapSlices map[string][]int
	Ptr       *inner
	PtrPtr    **inner
	Arr       [3][]int
	PlainArr  [2]int
	embedded
	*inner
	priv    []byte
	privMap map[int]*inner
	Any     any
	Err     error
	When    time.Time
	Name    string
	N       int
}

func fullShape() everyShape {
	in := &inner{Xs: []int{1, 2}, M: map[string]string{"k": "v"}}
	return everyShape{
		Nested:    [][]string{{"a", "b"}, nil, {}},
		MapSlices: map[string][]int{"one": {1}, "nil": nil, "empty": {}},
		Ptr:       &inner{Xs: []int{3}},
		PtrPtr:    &in,
		Arr:       [3][]int{{4}, nil, {5, 6}},
		PlainArr:  [2]int{7, 8},
		embedded:  embedded{Tags: []string{"t"}},
		inner:     &inner{Xs: []int{9}},
		priv:      []byte("secret"),
		privMap:   map[int]*inner{1: {Xs: []int{10}}},
		Any:       &inner{Xs: []int{11}},
		Err:       errors.New("boom"),
		When:      time.Now(),
		Name:      "n",
		N:         12,
	}
}

// TestR2_EveryShapeIsCopiedDeeply: a spec with nested slices, maps of
// slices, pointers to structs holding slices and maps, arrays, embedded
// structs (by value and by pointer), unexported fields and interfaces
// shares no memory with its copy, and mutating the copy leaves the
// original as it was.
func TestR2_EveryShapeIsCopiedDeeply(t *testing.T) {
	orig := fullShape()
	c := assertIndependent(t, orig)

	c.Nested[0][0] = "X"
	c.MapSlices["one"][0] = 100
	c.MapSlices["new"] = []int{1}
	c.Ptr.Xs[0] = 100
	(*c.PtrPtr).Xs[0] = 100
	(*c.PtrPtr).M["k"] = "X"
	c.Arr[0][0] = 100
	c.Tags[0] = "X"
	c.inner.Xs[0] = 100
	c.priv[0] = 'X'
	c.privMap[1].Xs[0] = 100
	c.Any.(*inner).Xs[0] = 100

	want := fullShape()
	want.When = orig.When
	assert.Equal(t, want.Nested, orig.Nested)
	assert.Equal(t, want.MapSlices, orig.MapSlices)
	assert.Equal(t, want.Ptr, orig.Ptr)
	assert.Equal(t, *want.PtrPtr, *orig.PtrPtr)
	assert.Equal(t, want.Arr, orig.Arr)
	assert.Equal(t, want.Tags, orig.Tags)
	assert.Equal(t, want.inner, orig.inner)
	assert.Equal(t, want.priv, orig.priv)
	assert.Equal(t, want.privMap, orig.privMap)
	assert.Equal(t, want.Any, orig.Any)
}

// TestR2_NilStaysNilEmptyStaysEmpty: nil slices, maps, pointers and
// interfaces stay nil in the copy; empty slices and maps stay empty and
// non-nil, at any depth.
func TestR2_NilStaysNilEmptyStaysEmpty(t *testing.T) {
	type spec struct {
		NilSlice   []int
		EmptySlice []int
		CapSlice   []int
		NilMap     map[string]int
		EmptyMap   map[string]int
		NilPtr     *inner
		NilAny     any
		Deep       map[string][]string
	}
	orig := spec{
		EmptySlice: []int{},
		CapSlice:   make([]int, 0, 4),
		EmptyMap:   map[string]int{},
		Deep:       map[string][]string{"nil": nil, "empty": {}},
	}
	c := assertIndependent(t, orig)
	assert.Nil(t, c.NilSlice)
	assert.NotNil(t, c.EmptySlice)
	assert.Empty(t, c.EmptySlice)
	assert.NotNil(t, c.CapSlice)
	assert.Empty(t, c.CapSlice)
	assert.Nil(t, c.NilMap)
	assert.NotNil(t, c.EmptyMap)
	assert.Nil(t, c.NilPtr)
	assert.Nil(t, c.NilAny)
	assert.Nil(t, c.Deep["nil"])
	assert.NotNil(t, c.Deep["empty"])

	// Appending to the copy of an empty slice with spare capacity never
	// writes into the original's array.
	c.CapSlice = append(c.CapSlice, 1)
	assert.Equal(t, 0, len(orig.CapSlice))
	assert.Equal(t, []int{}, orig.CapSlice[:0])
	full := orig.CapSlice[:1]
	assert.Equal(t, 0, full[0])
}

type node struct {
	Next *node
	Kids []*node
	Val  []int
}

// TestR2_CyclesArePreserved: pointer cycles and shared pointers (in a
// recursive type) are copied once each: the copy has the same shape, made
// of new memory, and copying terminates.
func TestR2_CyclesArePreserved(t *testing.T) {
	type graph struct{ Root *node }
	a := &node{Val: []int{1}}
	b := &node{Val: []int{2}, Next: a}
	a.Next = b
	a.Kids = []*node{b, b}
	orig := graph{Root: a}

	c := copySpec(t, orig)
	require.NotSame(t, orig.Root, c.Root)
	assert.Same(t, c.Root, c.Root.Next.Next, "the cycle is a cycle in the copy")
	assert.Same(t, c.Root.Kids[0], c.Root.Kids[1], "a shared pointer stays shared")
	assert.Same(t, c.Root.Next, c.Root.Kids[0])
	assert.NotSame(t, b, c.Root.Next)
	c.Root.Next.Val[0] = 100
	assert.Equal(t, 2, b.Val[0])
	assert.True(t, reflect.DeepEqual(orig, copySpec(t, orig)))
}

// Uncopyable specs.
type (
	funcSpec   struct{ F func() }
	chanSpec   struct{ C chan int }
	unsafeSpec struct{ P unsafe.Pointer }
	mutexSpec  struct {
		Inner struct {
			Items []string
			mu    sync.Mutex
		}
	}
	atomicSpec  struct{ N atomic.Int64 }
	rwSpec      struct{ M map[string]*sync.RWMutex }
	dynamicSpec struct{ Any any }
)

// TestR2_UncopyableSpecsAreRefused: a spec holding a func, a channel, an
// unsafe.Pointer or a sync primitive at any depth is never copied
// shallowly: DeepCopy panics with a *CopyError naming the spec type and
// the field, and CopyError reports it without copying.
func TestR2_UncopyableSpecsAreRefused(t *testing.T) {
	for name, r := range map[string]interface {
		resource.Resource
		resource.CopyChecker
	}{
		"func":         newShape(funcSpec{}),
		"chan":         newShape(chanSpec{}),
		"unsafe":       newShape(unsafeSpec{}),
		"sync.Mutex":   newShape(mutexSpec{}),
		"atomic.Int64": &typed.Resource[atomicSpec, shapeDef]{},
		"sync.RWMutex": newShape(rwSpec{}),
	} {
		t.Run(name, func(t *testing.T) {
			err := r.CopyError()
			var ce *typed.CopyError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, err.Error(), "Spec")
			assert.Contains(t, err.Error(), "typed_test.")
			assert.Contains(t, err.Error(), "cannot be deep-copied")
			got := catchPanic(func() { r.DeepCopy() })
			require.ErrorAs(t, got, &ce)
			assert.Equal(t, err.Error(), got.Error())
		})
	}
	// A func behind an interface is found when copying.
	r := newShape(dynamicSpec{Any: func() {}})
	require.NoError(t, r.CopyError())
	got := catchPanic(func() { r.DeepCopy() })
	var ce *typed.CopyError
	require.ErrorAs(t, got, &ce)
	assert.Contains(t, got.Error(), "dynamicSpec")
	assert.Contains(t, got.Error(), "func()")
	// Nil or plain values behind an interface copy fine.
	require.NotPanics(t, func() { newShape(dynamicSpec{Any: 3}).DeepCopy() })
}

func catchPanic(f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err, _ = p.(error)
			if err == nil {
				err = errors.New("non-error panic")
			}
		}
	}()
	f()
	return nil
}

// genSpec has the methods deepcopy-gen writes, on the pointer.
type genSpec struct {
	Items []string
	calls *int
}

func (in *genSpec) DeepCopyInto(out *genSpec) {
	*out = *in
	out.Items = append([]string(nil), in.Items...)
	*in.calls++
}

func (in *genSpec) DeepCopy() *genSpec {
	out := new(genSpec)
	in.DeepCopyInto(out)
	return out
}

// ptrOnlySpec has only the pointer DeepCopy.
type ptrOnlySpec struct {
	Items []string
	calls *int
}

func (in *ptrOnlySpec) DeepCopy() *ptrOnlySpec {
	*in.calls++
	return &ptrOnlySpec{Items: append([]string(nil), in.Items...), calls: in.calls}
}

// TestR2_DeepCopyGenShapeIsUsed: a spec with deepcopy-gen's pointer
// methods is copied by them (DeepCopyInto when present), never by
// assignment.
func TestR2_DeepCopyGenShapeIsUsed(t *testing.T) {
	calls := 0
	c := copySpec(t, genSpec{Items: []string{"a"}, calls: &calls})
	assert.Equal(t, 1, calls)
	c.Items[0] = "b"

	calls = 0
	orig := ptrOnlySpec{Items: []string{"a"}, calls: &calls}
	c2 := copySpec(t, orig)
	assert.Equal(t, 1, calls)
	c2.Items[0] = "b"
	assert.Equal(t, "a", orig.Items[0])
}

// TestR2_ValueDeepCopyMethodIsUsed: a DeepCopy() S value method copies
// the spec.
func TestR2_ValueDeepCopyMethodIsUsed(t *testing.T) {
	orig := linkSpec{Addrs: []string{"a"}, Opts: map[string]int{"x": 1}}
	c := assertIndependent(t, orig)
	c.Addrs[0] = "b"
	assert.Equal(t, "a", orig.Addrs[0])
}

// TestR1_DeepEqualityForEveryShape: specs are compared deeply whatever
// their shape; a nil and an empty slice or map are equal, at any depth;
// times compare by instant; an Equal method decides, on the value or on
// the pointer.
func TestR1_DeepEqualityForEveryShape(t *testing.T) {
	a, b := newShape(fullShape()), newShape(fullShape())
	b.TypedSpec().When = a.TypedSpec().When
	assert.True(t, resource.Equal(a, b))
	(*b.TypedSpec().PtrPtr).M["k"] = "other"
	assert.False(t, resource.Equal(a, b))

	type ns struct {
		S []int
		M map[string][]int
		P *ns
		T time.Time
	}
	assert.True(t, resource.Equal(newShape(ns{}), newShape(ns{S: []int{}})), "nil and empty slices are equal")
	assert.True(t, resource.Equal(newShape(ns{}), newShape(ns{M: map[string][]int{}})), "nil and empty maps are equal")
	assert.True(t, resource.Equal(newShape(ns{M: map[string][]int{"a": nil}}), newShape(ns{M: map[string][]int{"a": {}}})), "at any depth")
	assert.True(t, resource.Equal(newShape(ns{P: &ns{}}), newShape(ns{P: &ns{S: []int{}}})), "behind pointers")
	assert.False(t, resource.Equal(newShape(ns{}), newShape(ns{P: &ns{}})), "a nil pointer is not a pointer to a zero value")
	assert.False(t, resource.Equal(newShape(ns{}), newShape(ns{S: []int{0}})))
	assert.True(t, resource.Equal(newShape(ns{S: []int{1}}), newShape(ns{S: []int{1}})))
	now := time.Now()
	assert.True(t, resource.Equal(newShape(ns{T: now}), newShape(ns{T: now.Round(0).UTC()})), "times compare by instant")
	assert.False(t, resource.Equal(newShape(ns{T: now}), newShape(ns{T: now.Add(1)})))

	type plainSpec struct {
		A int
		S string
		F float64
	}
	assert.True(t, resource.Equal(newShape(plainSpec{1, "s", 2}), newShape(plainSpec{1, "s", 2})))
	assert.False(t, resource.Equal(newShape(plainSpec{1, "s", 2}), newShape(plainSpec{1, "t", 2})))

	assert.True(t, resource.Equal(newShape(ptrEqSpec{N: 1}), newShape(ptrEqSpec{N: 11})), "pointer Equal decides")
	assert.False(t, resource.Equal(newShape(ptrEqSpec{N: 1}), newShape(ptrEqSpec{N: 2})))
}

// ptrEqSpec decides its equality modulo 10, with a pointer receiver.
type ptrEqSpec struct{ N int }

func (s *ptrEqSpec) Equal(o any) bool {
	other, ok := o.(ptrEqSpec)
	return ok && s.N%10 == other.N%10
}

// TestR2_ZeroResourceCopies: a Resource built without New (its zero
// value) copies as well.
func TestR2_ZeroResourceCopies(t *testing.T) {
	r := &typed.Resource[inner, shapeDef]{}
	r.TypedSpec().Xs = []int{1}
	c := r.DeepCopy().(*typed.Resource[inner, shapeDef])
	c.TypedSpec().Xs[0] = 2
	assert.Equal(t, 1, r.TypedSpec().Xs[0])
}

// TestR2_CopyErrorNamesTheField: the refusal names the field path.
func TestR2_CopyErrorNamesTheField(t *testing.T) {
	err := newShape(mutexSpec{}).CopyError()
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), ".Inner.mu"), err.Error())
	assert.Contains(t, err.Error(), "sync.Mutex")
}

// TestR2_ImmutableValuesAreShared: netip addresses (which hold a unique
// handle), times and regexps are immutable values: copies share them and
// stay equal and usable.
func TestR2_ImmutableValuesAreShared(t *testing.T) {
	type spec struct {
		Addr   netip.Addr
		Prefix netip.Prefix
		Addrs  []netip.Addr
		When   time.Time
		Re     *regexp.Regexp
	}
	orig := spec{
		Addr:   netip.MustParseAddr("10.0.0.1"),
		Prefix: netip.MustParsePrefix("fd00::/64"),
		Addrs:  []netip.Addr{netip.MustParseAddr("fe80::1%eth0")},
		When:   time.Now(),
		Re:     regexp.MustCompile("^a+$"),
	}
	c := copySpec(t, orig)
	assert.True(t, c.Addr == orig.Addr)
	assert.True(t, c.Addr.Is4())
	assert.Equal(t, "10.0.0.1", c.Addr.String())
	assert.True(t, c.Prefix == orig.Prefix)
	assert.Equal(t, "fe80::1%eth0", c.Addrs[0].String())
	assert.True(t, c.When.Equal(orig.When))
	assert.Same(t, orig.Re, c.Re)
	assert.True(t, resource.Equal(newShape(orig), newShape(c)))
	c.Addrs[0] = netip.Addr{}
	assert.Equal(t, "fe80::1%eth0", orig.Addrs[0].String())
	assert.False(t, resource.Equal(newShape(orig), newShape(c)))
}

// TestApproxSizeFollowsTheSpec: the size estimate grows with what the
// spec refers to, and is constant for a plain spec.
func TestApproxSizeFollowsTheSpec(t *testing.T) {
	small := newShape(countSpec{N: 1}).ApproxSize()
	assert.Equal(t, small, newShape(countSpec{N: 1 << 40}).ApproxSize())
	type blob struct {
		Data []byte
		Name string
		M    map[string][]int
	}
	big := newShape(blob{Data: make([]byte, 16<<10), Name: "xyz", M: map[string][]int{"a": make([]int, 100)}}).ApproxSize()
	assert.GreaterOrEqual(t, big, 16<<10+800+3+16)
	assert.Less(t, big, 16<<10+800+1024)
	a := &node{Val: []int{1}}
	a.Next = a
	assert.Positive(t, newShape(struct{ Root *node }{a}).ApproxSize(), "cycles end")
}
