package typed

import (
	"reflect"
	"unsafe"
)

// ApproxSize estimates the bytes of memory this resource holds: the
// resource itself, its labels, annotations and finalizers, and its spec,
// followed through strings, slices (by capacity), maps, pointers and
// interfaces. States use it to bound the memory of what they keep (inmem
// bounds its history with it). A plain-value spec without strings costs a
// constant; others are walked by reflection.
func (r *Resource[S, D]) ApproxSize() int {
	p := cachedPlan[S]()
	if p == nil {
		p = planOf[S]()
	}
	return r.approxSize(p)
}

// approxSize is ApproxSize with S's plan p.
func (r *Resource[S, D]) approxSize(p *plan[S]) int {
	n := int(unsafe.Sizeof(*r)) + r.md.ApproxSize()
	if p.fixedSize {
		return n
	}
	if p.sizeFn != nil {
		return n + p.sizeFn(r.spec)
	}
	w := sizeWalker{}
	return n + w.dynamic(reflect.ValueOf(&r.spec).Elem())
}

// hasDynamicSize reports whether values of t may hold memory beyond
// their own size (strings, references).
func hasDynamicSize(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
		return true
	case reflect.Array:
		return t.Len() > 0 && hasDynamicSize(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasDynamicSize(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// sizeWalker sums the memory a value refers to.
type sizeWalker struct {
	// seen are the pointers already counted (cycles, sharing); made on
	// first use.
	seen map[unsafe.Pointer]bool
}

// maxSizeDepth bounds the walk: what lies deeper is not counted.
const maxSizeDepth = 64

// dynamic returns the bytes v refers to beyond its own size.
func (w *sizeWalker) dynamic(v reflect.Value) int {
	return w.walk(v, 0)
}

func (w *sizeWalker) walk(v reflect.Value, depth int) int {
	if depth > maxSizeDepth {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := v.Cap() * int(v.Type().Elem().Size())
		if hasDynamicSize(v.Type().Elem()) {
			for i := range v.Len() {
				n += w.walk(v.Index(i), depth+1)
			}
		}
		return n
	case reflect.Map:
		return w.mapSize(v, depth)
	case reflect.Pointer:
		if v.IsNil() || !w.first(v.UnsafePointer()) {
			return 0
		}
		return int(v.Type().Elem().Size()) + w.walk(v.Elem(), depth+1)
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int(e.Type().Size()) + w.walk(e, depth+1)
	case reflect.Array:
		n := 0
		for i := range v.Len() {
			n += w.walk(v.Index(i), depth+1)
		}
		return n
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			n += w.walk(v.Field(i), depth+1)
		}
		return n
	}
	return 0
}

// mapStringGuess is the bytes counted per string key or value of a map,
// which the estimate does not read: reading a map's strings by
// reflection costs an allocation per entry.
const mapStringGuess = 16

// mapSize estimates the memory of a map: its entries, a guess for string
// keys and values, and a walk of values that hold references (one
// iterator and one value per map, not per entry). Other keys are not
// walked.
func (w *sizeWalker) mapSize(v reflect.Value, depth int) int {
	if v.IsNil() {
		return 0
	}
	t := v.Type()
	n := 48 + v.Len()*int(t.Key().Size()+t.Elem().Size()+8)
	if t.Key().Kind() == reflect.String {
		n += v.Len() * mapStringGuess
	}
	switch {
	case t.Elem().Kind() == reflect.String:
		n += v.Len() * mapStringGuess
	case hasDynamicSize(t.Elem()):
		val := reflect.New(t.Elem()).Elem()
		var it reflect.MapIter
		it.Reset(v)
		for it.Next() {
			val.SetIterValue(&it)
			n += w.walk(val, depth+1)
		}
	}
	return n
}

// first reports whether p is counted for the first time.
func (w *sizeWalker) first(p unsafe.Pointer) bool {
	if w.seen == nil {
		w.seen = map[unsafe.Pointer]bool{}
	}
	if w.seen[p] {
		return false
	}
	w.seen[p] = true
	return true
}
