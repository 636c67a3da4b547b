package typed

import (
	"fmt"
	"reflect"
	"regexp"
	"sync"
	"time"
	"unsafe"
)

// The deep copy of a spec type without a DeepCopy method is a plan of
// nodes computed once per type by reflection: which parts of a value hold
// mutable references (pointers, slices, maps, interfaces) and how to
// replace each with a copy. A copy starts from a plain assignment of the
// whole spec (which copies every value part) and then walks only the nodes
// that hold references, fixing each in place: the references are read from
// the assigned copy itself and replaced by references to new copies. Types
// are never inspected per copy; allocation, map iteration and the dynamic
// type of an interface go through package reflect's primitives.
//
// Decisions (documented in the package doc):
//   - unexported fields are copied like exported ones (R2 is about memory,
//     not visibility);
//   - map keys are kept as they are: a key is an identity (a pointer key is
//     compared by address), so copying it would change the map's meaning;
//   - values immutable by contract are shared (see sharedAsIs);
//   - shared references and cycles are preserved in the copy for types
//     that can hold them (recursive types, interfaces): each pointer, map
//     and slice is copied once per copy and reused where it appears again;
//   - funcs, channels, unsafe.Pointers and the types of packages sync and
//     sync/atomic cannot be copied: the plan records why, with the path of
//     the field.

// nodeKind says how a part of a value is fixed after the plain assignment.
type nodeKind uint8

const (
	nodePlain  nodeKind = iota // nothing to do
	nodeStruct                 // fix the fields that need it
	nodeArray                  // fix every element
	nodePtr                    // copy the pointee
	nodeSlice                  // copy the backing array
	nodeMap                    // copy the map
	nodeIface                  // copy the dynamic value
	nodeBad                    // cannot be copied
)

// node is the copy plan of one type.
type node struct {
	t    reflect.Type
	kind nodeKind
	// elem is the plan of the element (array, pointer, slice, map value).
	elem *node
	// fields are the struct fields that need fixing.
	fields []fieldNode
	// bad says why the type cannot be copied (nodeBad).
	bad string
	// pair is struct{ K key; V elem } for a map: one allocation holds
	// both iteration temporaries of a map copy.
	pair reflect.Type
	// bytesOnly: the elements of a slice hold no pointers at all (numbers,
	// booleans, arrays and structs of them), so the slice's array is
	// copied as bytes.
	bytesOnly bool
}

// fieldNode is a struct field that needs fixing.
type fieldNode struct {
	off uintptr
	n   *node
}

// plainNode is the plan of every type that needs nothing beyond assignment.
var plainNode = &node{kind: nodePlain}

// deepPlan is the copy plan of a spec type.
type deepPlan struct {
	root *node
	// tracked: the type can hold shared references or cycles (it is
	// recursive or holds interfaces), so copies remember what they copied.
	tracked bool
	// err is why the type cannot be copied (nil when it can).
	err error
}

// planBuilder builds the nodes of one type graph.
type planBuilder struct {
	// done are the nodes built or being built, by type: a recursive type
	// refers back to its own node.
	done map[reflect.Type]*node
	// building are the types whose node is being built.
	building map[reflect.Type]bool
	tracked  bool
	err      error
	spec     reflect.Type
}

// buildDeepPlan returns the copy plan of t.
func buildDeepPlan(t reflect.Type) *deepPlan {
	b := &planBuilder{done: map[reflect.Type]*node{}, building: map[reflect.Type]bool{}, spec: t}
	root := b.build(t, "")
	return &deepPlan{root: root, tracked: b.tracked, err: b.err}
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	locationType = reflect.TypeFor[*time.Location]()
	regexpType   = reflect.TypeFor[*regexp.Regexp]()
)

// sharedAsIs reports whether values of t are immutable by contract and
// shared by copies: time.Time, *time.Location, *regexp.Regexp, and the
// handles of package unique (which netip.Addr holds: its identity is the
// handle's address, so a copied handle would break the address).
func sharedAsIs(t reflect.Type) bool {
	return t == timeType || t == locationType || t == regexpType || t.PkgPath() == "unique"
}

// build returns the node of t, found at path (for error messages).
func (b *planBuilder) build(t reflect.Type, path string) *node {
	if n, ok := b.done[t]; ok {
		if b.building[t] {
			b.tracked = true // t contains itself
		}
		return n
	}
	if sharedAsIs(t) {
		return plainNode
	}
	if pkg := t.PkgPath(); (pkg == "sync" || pkg == "sync/atomic") && t.Kind() == reflect.Struct {
		return b.fail(path, "is a "+t.String()+", a synchronization primitive")
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return b.fail(path, "is a "+t.String())
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Array:
		return b.buildElem(t, path)
	case reflect.Interface:
		b.tracked = true
		return &node{t: t, kind: nodeIface}
	case reflect.Struct:
		return b.buildStruct(t, path)
	}
	return plainNode
}

// buildElem builds the node of a type with an element: pointer, slice,
// map or array.
func (b *planBuilder) buildElem(t reflect.Type, path string) *node {
	n := &node{t: t}
	b.done[t] = n
	b.building[t] = true
	defer delete(b.building, t)
	// The kind is set before the element is built: a recursive type
	// meets this node again while building its element.
	switch t.Kind() {
	case reflect.Pointer:
		n.kind = nodePtr
		n.elem = b.build(t.Elem(), "(*"+path+")")
	case reflect.Slice:
		n.kind = nodeSlice
		n.elem = b.build(t.Elem(), path+"[]")
		n.bytesOnly = !holdsPointers(t.Elem())
	case reflect.Map:
		n.kind = nodeMap
		n.elem = b.build(t.Elem(), path+"[key]")
		n.pair = reflect.StructOf([]reflect.StructField{{Name: "K", Type: t.Key()}, {Name: "V", Type: t.Elem()}})
		// Keys are kept; a key that cannot be copied is still refused.
		if k := b.build(t.Key(), path+"(key)"); k.kind == nodeBad {
			n.elem = k
		}
	case reflect.Array:
		n.kind = nodeArray
		n.elem = b.build(t.Elem(), path+"[]")
		if n.elem.kind == nodePlain || t.Len() == 0 {
			n.kind = nodePlain
		}
	}
	if n.elem.kind == nodeBad {
		n.kind, n.bad = nodeBad, n.elem.bad
	}
	return n
}

// buildStruct builds the node of a struct type.
func (b *planBuilder) buildStruct(t reflect.Type, path string) *node {
	n := &node{t: t, kind: nodeStruct}
	b.done[t] = n
	b.building[t] = true
	defer delete(b.building, t)
	var fields []fieldNode
	for i := range t.NumField() {
		f := t.Field(i)
		fn := b.build(f.Type, path+"."+f.Name)
		if fn.kind == nodeBad {
			n.kind, n.bad = nodeBad, fn.bad
			return n
		}
		if fn.kind != nodePlain {
			fields = append(fields, fieldNode{off: f.Offset, n: fn})
		}
	}
	if len(fields) == 0 {
		n.kind = nodePlain
		return n
	}
	n.fields = fields
	return n
}

// fail records that the value at path cannot be copied.
func (b *planBuilder) fail(path, why string) *node {
	msg := "the spec"
	if path != "" {
		msg = "field " + path
	}
	msg += " " + why
	if b.err == nil {
		b.err = &CopyError{SpecType: b.spec, Reason: msg}
	}
	return &node{kind: nodeBad, bad: msg}
}

// CopyError says why a spec type cannot be deep-copied: it holds a func, a
// channel, an unsafe.Pointer or a synchronization primitive. DeepCopy of a
// resource with such a spec panics with a *CopyError, and a state refuses
// to store it with an error of the invalid class.
type CopyError struct {
	// SpecType is the spec type.
	SpecType reflect.Type
	// Reason names the part that cannot be copied.
	Reason string
}

// Error implements error.
func (e *CopyError) Error() string {
	return fmt.Sprintf("typed: spec type %s cannot be deep-copied: %s", e.SpecType, e.Reason)
}

// copier is the state of one deep copy.
type copier struct {
	plan *deepPlan
	spec reflect.Type
	// seen maps what was copied to its copy (tracked plans only).
	seen map[seenKey]unsafe.Pointer
	// scratch holds a slice header while its elements are copied out.
	scratch sliceHeader
}

// seenKey identifies a copied reference: its address and type (a struct
// and its first field share an address), and for slices the length.
type seenKey struct {
	p   unsafe.Pointer
	t   reflect.Type
	len int
}

// sliceHeader is the memory layout of a slice.
type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

// copierPool recycles copiers of tracked plans (their seen maps).
var copierPool = sync.Pool{New: func() any { return &copier{seen: map[seenKey]unsafe.Pointer{}} }}

// fixInPlace replaces, in the value at p (a plain copy of the original),
// every reference with a reference to a copy. It panics with a *CopyError
// when the value holds something that cannot be copied.
func (dp *deepPlan) fixInPlace(p unsafe.Pointer, spec reflect.Type) {
	if dp.err != nil {
		panic(dp.err)
	}
	if !dp.tracked {
		c := copier{plan: dp, spec: spec}
		c.fix(dp.root, p)
		return
	}
	c := copierPool.Get().(*copier)
	c.plan, c.spec = dp, spec
	defer func() {
		clear(c.seen)
		c.plan, c.spec = nil, nil
		copierPool.Put(c)
	}()
	c.fix(dp.root, p)
}

// fix fixes the value at p according to n.
func (c *copier) fix(n *node, p unsafe.Pointer) {
	switch n.kind {
	case nodePlain:
	case nodeStruct:
		for _, f := range n.fields {
			c.fix(f.n, unsafe.Add(p, f.off))
		}
	case nodeArray:
		size := n.elem.t.Size()
		for i := range n.t.Len() {
			c.fix(n.elem, unsafe.Add(p, uintptr(i)*size))
		}
	case nodePtr:
		c.fixPtr(n, p)
	case nodeSlice:
		c.fixSlice(n, p)
	case nodeMap:
		c.fixMap(n, p)
	case nodeIface:
		c.fixIface(n, p)
	case nodeBad:
		panic(&CopyError{SpecType: c.spec, Reason: n.bad})
	}
}

// remembered returns the copy of what k names, if already copied.
func (c *copier) remembered(k seenKey) (unsafe.Pointer, bool) {
	if c.seen == nil {
		return nil, false
	}
	p, ok := c.seen[k]
	return p, ok
}

// remember records the copy of what k names.
func (c *copier) remember(k seenKey, p unsafe.Pointer) {
	if c.seen != nil {
		c.seen[k] = p
	}
}

// fixPtr replaces the pointer at p with a pointer to a copy of its pointee.
func (c *copier) fixPtr(n *node, p unsafe.Pointer) {
	old := *(*unsafe.Pointer)(p)
	if old == nil {
		return
	}
	k := seenKey{p: old, t: n.t}
	if cp, ok := c.remembered(k); ok {
		*(*unsafe.Pointer)(p) = cp
		return
	}
	et := n.t.Elem()
	nv := reflect.New(et)
	nv.Elem().Set(reflect.NewAt(et, old).Elem())
	np := nv.UnsafePointer()
	c.remember(k, np)
	c.fix(n.elem, np)
	*(*unsafe.Pointer)(p) = np
}

// fixSlice replaces the slice at p with a slice of copies of its elements:
// nil stays nil, empty stays empty.
func (c *copier) fixSlice(n *node, p unsafe.Pointer) {
	old := *(*sliceHeader)(p)
	if old.data == nil || (old.len == 0 && old.cap == 0) {
		return // nothing shared that could be written to
	}
	v := reflect.NewAt(n.t, p).Elem()
	k := seenKey{p: old.data, t: n.t, len: old.len}
	if cp, ok := c.remembered(k); ok {
		*(*sliceHeader)(p) = sliceHeader{data: cp, len: old.len, cap: old.len}
		return
	}
	if old.len == 0 {
		v.Set(reflect.MakeSlice(n.t, 0, 0))
		return
	}
	if n.bytesOnly {
		// Memory without pointers is bytes to the collector: one
		// allocation, not cleared, filled by one move.
		nb := uintptr(old.len) * n.t.Elem().Size()
		data := unsafe.Pointer(unsafe.SliceData(append([]byte(nil), unsafe.Slice((*byte)(old.data), nb)...)))
		*(*sliceHeader)(p) = sliceHeader{data: data, len: old.len, cap: old.len}
		c.remember(k, data)
		return
	}
	v.SetZero()
	v.Grow(old.len)
	v.SetLen(old.len)
	c.scratch = old
	reflect.Copy(v, reflect.NewAt(n.t, unsafe.Pointer(&c.scratch)).Elem())
	c.scratch = sliceHeader{}
	data := (*sliceHeader)(p).data
	c.remember(k, data)
	if n.elem.kind != nodePlain {
		size := n.elem.t.Size()
		for i := range old.len {
			c.fix(n.elem, unsafe.Add(data, uintptr(i)*size))
		}
	}
}

// holdsPointers reports whether values of t hold pointers: anything but
// numbers, booleans, and arrays and structs of them.
func holdsPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return t.Len() > 0 && holdsPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsPointers(t.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

// fixMap replaces the map at p with a copy: same keys, copied values.
func (c *copier) fixMap(n *node, p unsafe.Pointer) {
	v := reflect.NewAt(n.t, p).Elem()
	if v.IsNil() {
		return
	}
	k := seenKey{p: v.UnsafePointer(), t: n.t}
	if cp, ok := c.remembered(k); ok {
		*(*unsafe.Pointer)(p) = cp
		return
	}
	nm := reflect.MakeMapWithSize(n.t, v.Len())
	c.remember(k, nm.UnsafePointer())
	tmp := reflect.New(n.pair)
	key, val := tmp.Elem().Field(0), tmp.Elem().Field(1)
	valp := unsafe.Add(tmp.UnsafePointer(), n.pair.Field(1).Offset)
	var it reflect.MapIter
	it.Reset(v)
	for it.Next() {
		key.SetIterKey(&it)
		val.SetIterValue(&it)
		c.fix(n.elem, valp)
		nm.SetMapIndex(key, val)
	}
	v.Set(nm)
}

// fixIface replaces the dynamic value of the interface at p with a copy.
// A dynamic value without references is shared: an interface's value
// cannot be changed in place.
func (c *copier) fixIface(n *node, p unsafe.Pointer) {
	v := reflect.NewAt(n.t, p).Elem()
	if v.IsNil() {
		return
	}
	dyn := v.Elem()
	dp := dynamicPlan(dyn.Type())
	if dp.err != nil {
		panic(&CopyError{SpecType: c.spec, Reason: "an interface holds a value that cannot be copied: " + dp.err.(*CopyError).Reason})
	}
	if dp.root.kind == nodePlain {
		return
	}
	nv := reflect.New(dyn.Type())
	nv.Elem().Set(dyn)
	c.fix(dp.root, nv.UnsafePointer())
	v.Set(nv.Elem())
}

// dynamicPlans caches the plans of the dynamic types found in interfaces.
var dynamicPlans sync.Map // reflect.Type → *deepPlan

// dynamicPlan returns the plan of a type found in an interface.
func dynamicPlan(t reflect.Type) *deepPlan {
	if p, ok := dynamicPlans.Load(t); ok {
		return p.(*deepPlan)
	}
	p, _ := dynamicPlans.LoadOrStore(t, buildDeepPlan(t))
	return p.(*deepPlan)
}
