// Package speceq is the deep equality of specs of rule R1 (see
// docs/resources-and-state.md): reflect.DeepEqual's equality, except that
//
//   - a nil slice equals an empty one, and a nil map an empty one, at any
//     depth (no encoding a state persists with keeps the difference: JSON
//     with omitempty and protobuf both decode an empty one as nil);
//   - two time.Time values are equal when they are the same instant
//     (time.Time.Equal), at any depth: encodings keep the instant, not the
//     monotonic clock reading nor the *time.Location pointer.
//
// Everything else is as reflect.DeepEqual: pointers are equal when they
// are equal or point to deeply equal values, floats compare with == (a NaN
// is unequal to itself), funcs are equal only when both are nil, channels
// and unsafe pointers when they are the same, and cyclic values terminate.
package speceq

import (
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// Equal reports whether a and b are deeply equal in the sense of the
// package documentation. Values of different dynamic types are unequal.
func Equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	if t != vb.Type() {
		return false
	}
	if t.Kind() != reflect.Pointer {
		// Addressable copies, so that a time.Time in an unexported field
		// can be read in place.
		pa, pb := reflect.New(t).Elem(), reflect.New(t).Elem()
		pa.Set(va)
		pb.Set(vb)
		va, vb = pa, pb
	}
	c := comparer{tracked: mayCycle(t)}
	return c.equal(va, vb)
}

// EqualPointed reports whether *a and *b are deeply equal; a and b are
// non-nil pointers of one type. Comparing through pointers keeps every
// value reached addressable, which spares boxing the specs.
func EqualPointed[S any](a, b *S) bool {
	va := reflect.ValueOf(a).Elem()
	c := comparer{tracked: mayCycle(va.Type())}
	return c.equal(va, reflect.ValueOf(b).Elem())
}

// cycles caches mayCycle: reflect.Type → bool.
var cycles sync.Map

// mayCycle reports whether values of type t can hold a reference cycle:
// t reaches itself through its element and field types, or holds an
// interface (whose dynamic values may). Comparing values of any other
// type needs no bookkeeping of the references under comparison.
func mayCycle(t reflect.Type) bool {
	if v, ok := cycles.Load(t); ok {
		return v.(bool)
	}
	v := reaches(t, map[reflect.Type]int{})
	cycles.Store(t, v)
	return v
}

// reaches reports whether t holds an interface or reaches a type on the
// path being walked (state: 1 on the path, 2 done).
func reaches(t reflect.Type, state map[reflect.Type]int) bool {
	switch state[t] {
	case 1:
		return true
	case 2:
		return false
	}
	state[t] = 1
	defer func() { state[t] = 2 }()
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return reaches(t.Elem(), state)
	case reflect.Map:
		return reaches(t.Key(), state) || reaches(t.Elem(), state)
	case reflect.Struct:
		for i := range t.NumField() {
			if reaches(t.Field(i).Type, state) {
				return true
			}
		}
	}
	return false
}

var timeType = reflect.TypeFor[time.Time]()

// visit is a pair of references being compared, for cycles.
type visit struct {
	a, b unsafe.Pointer
	typ  reflect.Type
}

// comparer holds the pairs of references under comparison, when the
// compared type may hold cycles (tracked); the map is made on the first
// reference met.
type comparer struct {
	tracked bool
	seen    map[visit]struct{}
}

// enter records the pair (a, b) of type t and reports whether it was
// already being compared (then it is assumed equal, as in
// reflect.DeepEqual: a difference shows elsewhere).
func (c *comparer) enter(a, b unsafe.Pointer, t reflect.Type) bool {
	if !c.tracked {
		return false
	}
	if uintptr(a) > uintptr(b) {
		a, b = b, a
	}
	v := visit{a, b, t}
	if c.seen == nil {
		c.seen = map[visit]struct{}{}
	} else if _, ok := c.seen[v]; ok {
		return true
	}
	c.seen[v] = struct{}{}
	return false
}

// equal compares a and b, of one type.
func (c *comparer) equal(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.String:
		return a.String() == b.String()
	case reflect.Array:
		for i := range a.Len() {
			if !c.equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		return c.slices(a, b)
	case reflect.Map:
		return c.maps(a, b)
	case reflect.Pointer:
		if a.UnsafePointer() == b.UnsafePointer() {
			return true
		}
		if a.IsNil() || b.IsNil() {
			return false
		}
		if c.enter(a.UnsafePointer(), b.UnsafePointer(), a.Type()) {
			return true
		}
		return c.equal(a.Elem(), b.Elem())
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() && b.IsNil()
		}
		ea, eb := a.Elem(), b.Elem()
		return ea.Type() == eb.Type() && c.equal(ea, eb)
	case reflect.Struct:
		if a.Type() == timeType {
			return timesEqual(a, b)
		}
		for i := range a.NumField() {
			if !c.equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Func:
		return a.IsNil() && b.IsNil()
	default: // Chan, UnsafePointer
		return a.Pointer() == b.Pointer()
	}
}

// decided compares what decides two slices or two maps without their
// elements: their lengths, their storage, a comparison of them already
// under way (a cycle); decided is false when the elements decide.
func (c *comparer) decided(a, b reflect.Value) (decided, equal bool) {
	n := a.Len()
	if n != b.Len() {
		return true, false
	}
	if n == 0 || a.UnsafePointer() == b.UnsafePointer() || c.enter(a.UnsafePointer(), b.UnsafePointer(), a.Type()) {
		return true, true
	}
	return false, false
}

// slices compares two slices: nil and empty are equal.
func (c *comparer) slices(a, b reflect.Value) bool {
	if decided, equal := c.decided(a, b); decided {
		return equal
	}
	n := a.Len()
	if a.Type().Elem().Kind() == reflect.Uint8 {
		return string(a.Bytes()) == string(b.Bytes())
	}
	for i := range n {
		if !c.equal(a.Index(i), b.Index(i)) {
			return false
		}
	}
	return true
}

// maps compares two maps: nil and empty are equal.
func (c *comparer) maps(a, b reflect.Value) bool {
	if decided, equal := c.decided(a, b); decided {
		return equal
	}
	it := a.MapRange()
	for it.Next() {
		k, v := it.Key(), it.Value()
		bv := b.MapIndex(k)
		if !bv.IsValid() || !c.equal(v, bv) {
			return false
		}
	}
	return true
}

// timesEqual compares two time.Time values by instant. A value reached
// through an unexported field can be read only in place (when it is
// addressable); one that cannot be read at all (inside a map or an
// interface reached through unexported fields) is compared as
// reflect.DeepEqual would, which is stricter.
func timesEqual(a, b reflect.Value) bool {
	ta, oka := timeOf(a)
	tb, okb := timeOf(b)
	if oka && okb {
		return ta.Equal(tb)
	}
	return deepTimes(a, b)
}

// deepTimes compares the fields of two time.Time values as
// reflect.DeepEqual does (wall, ext, then the location by pointer or
// content).
func deepTimes(a, b reflect.Value) bool {
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		switch fa.Kind() {
		case reflect.Uint64:
			if fa.Uint() != fb.Uint() {
				return false
			}
		case reflect.Int64:
			if fa.Int() != fb.Int() {
				return false
			}
		case reflect.Pointer:
			if fa.UnsafePointer() != fb.UnsafePointer() {
				return false
			}
		}
	}
	return true
}

// timeOf returns the time.Time v holds, when it can be read.
func timeOf(v reflect.Value) (time.Time, bool) {
	if v.CanAddr() {
		return *(*time.Time)(unsafe.Pointer(v.UnsafeAddr())), true
	}
	if v.CanInterface() {
		return v.Interface().(time.Time), true
	}
	return time.Time{}, false
}
