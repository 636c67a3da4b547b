package typed

import (
	"bytes"
	"reflect"
	"sync"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Identical reports whether other is a *Resource[S, D] (ok) and, if so,
// whether it is identical to r: the memory of its metadata and spec reads
// as r's. It is how a state's mutation detector (rule S7) compares a
// shared snapshot with its reference copy.
//
// Identical is stricter than equal ([resource.Equal]) and never calls the
// spec's methods: numbers, booleans and the other plain values compare
// bit for bit (so a NaN is identical to itself and -0 differs from 0);
// funcs, channels and unsafe.Pointers by address; strings by content;
// pointers, slices, maps and interfaces by what they refer to, with nil
// distinct from empty and a slice's capacity ignored (a reference both
// sides share is identical to itself, and cycles end). Struct padding is
// never compared. The metadata is compared as [resource.Metadata.Equal]
// compares it, timestamps included: its owner, finalizers, labels and
// annotations by content, whether a copy holds them or shares them (see
// [resource.Metadata.Copy]), an empty one the same as none.
// Its cost is linear in the resource's data: runs of plain memory (a
// []byte, a struct of numbers, an array of them) are compared in bulk and
// only what can hold a reference is walked.
func (r *Resource[S, D]) Identical(other resource.Resource) (identical, ok bool) {
	o, isTyped := other.(*Resource[S, D])
	if !isTyped {
		return false, false
	}
	if r == o {
		return true, true
	}
	if !identicalMetadata(&r.md, &o.md) {
		return false, true
	}
	return planOf[S]().identical(&r.spec, &o.spec), true
}

// identicalMetadata reports whether a and b are Equal and have the same
// timestamps.
func identicalMetadata(a, b *resource.Metadata) bool {
	return a.Equal(*b) && a.Created().Equal(b.Created()) && a.Updated().Equal(b.Updated())
}

// identical compares two specs by their memory (see Identical).
func (p *plan[S]) identical(a, b *S) bool {
	if p.eqMode == eqFunc {
		// A generated message (EqualVT, or a SpecMethods hook) keeps
		// caches that reads change (a protobuf size cache): its own
		// equality sees every change of its fields, and no cache.
		return p.eqFn(*a, *b)
	}
	return identicalMemory(p.same(), unsafe.Pointer(a), unsafe.Pointer(b))
}

// identicalMemory compares the values at a and b of the type of plan
// same.
func identicalMemory(same *samePlan, a, b unsafe.Pointer) bool {
	if same.root.kind == samePlain {
		return same.root.plainEqual(a, b)
	}
	c := sameCmp{}
	if same.tracked {
		c.seen = map[sameVisit]struct{}{}
	}
	return c.equal(same.root, a, b)
}

// same returns the identity plan of S, building it on first use.
func (p *plan[S]) same() *samePlan {
	p.sameOnce.Do(func() { p.samePlan = buildSamePlan(p.spec) })
	return p.samePlan
}

// The identity plan of a type is computed once by reflection, like the
// copy plan (deep.go): a node per type says which byte ranges of a value
// hold plain data (compared in bulk, padding left out) and which parts
// hold something to follow (strings, pointers, slices, maps,
// interfaces), at which offsets.

// sameKind says how a value is compared beyond its plain runs.
type sameKind uint8

const (
	samePlain  sameKind = iota // its runs say it all
	sameStruct                 // runs, then parts
	sameArray                  // every element by elem
	sameString                 // by content
	samePtr                    // by pointee
	sameSlice                  // length, then elements
	sameMap                    // length, then values by key
	sameIface                  // dynamic type, then value
)

// sameNode is the identity plan of one type.
type sameNode struct {
	t    reflect.Type
	kind sameKind
	// runs are the byte ranges of the value that hold plain data,
	// relative to its address, in order, adjacent ones merged.
	runs []memRun
	// parts are the struct fields to follow (sameStruct).
	parts []samePart
	// elem is the element's plan (array, pointer, slice, map value).
	elem *sameNode
	// dense: the value is plain and its runs cover all of its memory, so
	// that n values in a row are n × size bytes to compare in bulk.
	dense bool
}

// memRun is a byte range of a value.
type memRun struct{ off, n uintptr }

// samePart is a struct field to follow.
type samePart struct {
	off uintptr
	n   *sameNode
}

// samePlan is the identity plan of a spec type.
type samePlan struct {
	root *sameNode
	// tracked: the type is recursive or holds interfaces, so a
	// comparison remembers the reference pairs it is comparing (cycles
	// end).
	tracked bool
}

type sameBuilder struct {
	done     map[reflect.Type]*sameNode
	building map[reflect.Type]bool
	tracked  bool
}

func buildSamePlan(t reflect.Type) *samePlan {
	b := &sameBuilder{done: map[reflect.Type]*sameNode{}, building: map[reflect.Type]bool{}}
	root := b.build(t)
	return &samePlan{root: root, tracked: b.tracked}
}

// build returns the node of t.
func (b *sameBuilder) build(t reflect.Type) *sameNode {
	if n, ok := b.done[t]; ok {
		if b.building[t] {
			b.tracked = true // t contains itself
		}
		return n
	}
	n := &sameNode{t: t}
	b.done[t] = n
	b.building[t] = true
	defer delete(b.building, t)
	switch t.Kind() {
	case reflect.String:
		n.kind = sameString
	case reflect.Pointer:
		n.kind, n.elem = samePtr, b.build(t.Elem())
	case reflect.Slice:
		n.kind, n.elem = sameSlice, b.build(t.Elem())
	case reflect.Map:
		n.kind, n.elem = sameMap, b.build(t.Elem())
	case reflect.Interface:
		n.kind = sameIface
		b.tracked = true
	case reflect.Array:
		b.buildArray(n, t)
	case reflect.Struct:
		b.buildStruct(n, t)
	default: // numbers, booleans, funcs, channels, unsafe.Pointers
		n.kind, n.dense = samePlain, true
		if t.Size() > 0 {
			n.runs = []memRun{{0, t.Size()}}
		}
	}
	return n
}

func (b *sameBuilder) buildArray(n *sameNode, t reflect.Type) {
	n.elem = b.build(t.Elem())
	switch {
	case t.Len() == 0 || t.Size() == 0:
		n.kind, n.dense = samePlain, true
	case n.elem.dense:
		n.kind, n.dense = samePlain, true
		n.runs = []memRun{{0, t.Size()}}
	default:
		n.kind = sameArray
	}
}

func (b *sameBuilder) buildStruct(n *sameNode, t reflect.Type) {
	// A struct field's runs and parts are the struct's own, at the
	// field's offset: nested structs are flattened, so that a comparison
	// walks one list of parts (a struct cannot contain itself, so its
	// fields' nodes are complete).
	var runs []memRun
	for i := range t.NumField() {
		f := t.Field(i)
		fn := b.build(f.Type)
		switch fn.kind {
		case samePlain, sameStruct:
			for _, r := range fn.runs {
				r.off += f.Offset
				if k := len(runs) - 1; k >= 0 && runs[k].off+runs[k].n == r.off {
					runs[k].n += r.n
				} else {
					runs = append(runs, r)
				}
			}
			for _, p := range fn.parts {
				n.parts = append(n.parts, samePart{off: f.Offset + p.off, n: p.n})
			}
		default:
			n.parts = append(n.parts, samePart{off: f.Offset, n: fn})
		}
	}
	n.runs = runs
	if len(n.parts) > 0 {
		n.kind = sameStruct
		return
	}
	n.kind = samePlain
	covered := uintptr(0)
	for _, r := range runs {
		covered += r.n
	}
	n.dense = covered == t.Size()
}

// plainEqual compares the plain runs of the values at a and b.
func (n *sameNode) plainEqual(a, b unsafe.Pointer) bool {
	for _, r := range n.runs {
		if !memEqual(unsafe.Add(a, r.off), unsafe.Add(b, r.off), r.n) {
			return false
		}
	}
	return true
}

// memEqual compares n bytes at a and b. The views are of memory inside
// one value (a run of its plain fields, or the elements of one slice's
// array), so they never straddle allocations; reading a word that holds
// a pointer as bytes is harmless. Up to 32 aligned bytes are compared a
// word at a time, without a call.
func memEqual(a, b unsafe.Pointer, n uintptr) bool {
	if n <= 32 && (uintptr(a)|uintptr(b)|n)&7 == 0 {
		for i := uintptr(0); i < n; i += 8 {
			if *(*uint64)(unsafe.Add(a, i)) != *(*uint64)(unsafe.Add(b, i)) {
				return false
			}
		}
		return true
	}
	return a == b || bytes.Equal(unsafe.Slice((*byte)(a), n), unsafe.Slice((*byte)(b), n))
}

// sameCmp is the state of one comparison.
type sameCmp struct {
	// seen are the reference pairs being compared (tracked plans only):
	// met again, they are taken as identical, so that cycles end.
	seen map[sameVisit]struct{}
}

type sameVisit struct {
	a, b unsafe.Pointer
	t    reflect.Type
	len  int
}

// visiting reports whether the pair is already being compared, and
// remembers it.
func (c *sameCmp) visiting(k sameVisit) bool {
	if c.seen == nil {
		return false
	}
	if _, ok := c.seen[k]; ok {
		return true
	}
	c.seen[k] = struct{}{}
	return false
}

// equal compares the values at a and b of n's type.
func (c *sameCmp) equal(n *sameNode, a, b unsafe.Pointer) bool {
	if !n.plainEqual(a, b) {
		return false
	}
	switch n.kind {
	case sameStruct:
		for _, p := range n.parts {
			pa, pb := unsafe.Add(a, p.off), unsafe.Add(b, p.off)
			// What is the same memory needs no walk: a string, a
			// pointer, a map or a slice that both sides share.
			switch p.n.kind {
			case sameString:
				if *(*string)(pa) != *(*string)(pb) {
					return false
				}
				continue
			case samePtr, sameMap:
				if *(*unsafe.Pointer)(pa) == *(*unsafe.Pointer)(pb) {
					continue
				}
			case sameSlice:
				if sa, sb := (*sliceHeader)(pa), (*sliceHeader)(pb); *sa == *sb || c.equalSlices(p.n, sa, sb) {
					continue
				}
				return false
			}
			if !c.equal(p.n, pa, pb) {
				return false
			}
		}
	case sameArray:
		size := n.elem.t.Size()
		for i := range n.t.Len() {
			off := uintptr(i) * size
			if !c.equal(n.elem, unsafe.Add(a, off), unsafe.Add(b, off)) {
				return false
			}
		}
	case sameString:
		return *(*string)(a) == *(*string)(b)
	case samePtr:
		pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
		if pa == pb {
			return true
		}
		if pa == nil || pb == nil || c.visiting(sameVisit{a: pa, b: pb, t: n.t}) {
			return pa != nil && pb != nil
		}
		return c.equal(n.elem, pa, pb)
	case sameSlice:
		return c.equalSlices(n, (*sliceHeader)(a), (*sliceHeader)(b))
	case sameMap:
		return c.equalMaps(n, a, b)
	case sameIface:
		return c.equalIfaces(n, a, b)
	}
	return true
}

func (c *sameCmp) equalSlices(n *sameNode, a, b *sliceHeader) bool {
	if (a.data == nil) != (b.data == nil) || a.len != b.len {
		return false
	}
	if a.data == b.data || a.len == 0 {
		return true
	}
	size := n.elem.t.Size()
	if n.elem.dense {
		return memEqual(a.data, b.data, uintptr(a.len)*size)
	}
	if c.visiting(sameVisit{a: a.data, b: b.data, t: n.t, len: a.len}) {
		return true
	}
	for i := range a.len {
		off := uintptr(i) * size
		if !c.equal(n.elem, unsafe.Add(a.data, off), unsafe.Add(b.data, off)) {
			return false
		}
	}
	return true
}

// equalMaps compares two maps: the same length, and every key of a in b
// with an identical value.
func (c *sameCmp) equalMaps(n *sameNode, a, b unsafe.Pointer) bool {
	// A map is one pointer: the same pointer is the same map, and nil
	// is nil, without reflection.
	pa, pb := *(*unsafe.Pointer)(a), *(*unsafe.Pointer)(b)
	if pa == pb {
		return true
	}
	if pa == nil || pb == nil {
		return false
	}
	va, vb := reflect.NewAt(n.t, a).Elem(), reflect.NewAt(n.t, b).Elem()
	if va.Len() != vb.Len() {
		return false
	}
	if va.Len() == 0 || c.visiting(sameVisit{a: pa, b: pb, t: n.t}) {
		return true
	}
	et := n.t.Elem()
	key := reflect.New(n.t.Key()).Elem()
	x, y := reflect.New(et), reflect.New(et)
	var it reflect.MapIter
	it.Reset(va)
	for it.Next() {
		key.SetIterKey(&it)
		other := vb.MapIndex(key)
		if !other.IsValid() {
			return false
		}
		x.Elem().SetIterValue(&it)
		y.Elem().Set(other)
		if !c.equal(n.elem, x.UnsafePointer(), y.UnsafePointer()) {
			return false
		}
	}
	return true
}

// equalIfaces compares two interfaces: the same dynamic type and
// identical dynamic values.
func (c *sameCmp) equalIfaces(n *sameNode, a, b unsafe.Pointer) bool {
	// An interface is two words, a type (or method table) and a value
	// (or a pointer to it): the same words are the same value.
	if *(*[2]unsafe.Pointer)(a) == *(*[2]unsafe.Pointer)(b) {
		return true
	}
	va, vb := reflect.NewAt(n.t, a).Elem(), reflect.NewAt(n.t, b).Elem()
	if va.IsNil() || vb.IsNil() {
		return va.IsNil() == vb.IsNil()
	}
	ea, eb := va.Elem(), vb.Elem()
	if ea.Type() != eb.Type() {
		return false
	}
	dn := dynamicSamePlan(ea.Type())
	x, y := reflect.New(ea.Type()), reflect.New(ea.Type())
	x.Elem().Set(ea)
	y.Elem().Set(eb)
	return c.equal(dn, x.UnsafePointer(), y.UnsafePointer())
}

// dynamicSamePlans caches the identity plans of the dynamic types found
// in interfaces: reflect.Type → *sameNode.
var dynamicSamePlans sync.Map

func dynamicSamePlan(t reflect.Type) *sameNode {
	if n, ok := dynamicSamePlans.Load(t); ok {
		return n.(*sameNode)
	}
	n, _ := dynamicSamePlans.LoadOrStore(t, buildSamePlan(t).root)
	return n.(*sameNode)
}
