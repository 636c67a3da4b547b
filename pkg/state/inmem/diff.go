package inmem

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// compareSnapshot returns a *MutationError describing the first part of
// snap that differs from ref, its reference copy, or nil when none does.
// It compares memory, never by the resource's own methods beyond Metadata
// and Spec, so an Equal method that ignores a field does not hide a
// change to it.
//
// The metadata is compared field by field, the spec by reflection (see
// differ), which names the changed part. A typed resource is first
// compared in bulk ([typed.Resource.Identical]): identical memory is
// equal for the field and reflection comparisons too, so only a resource
// that is not identical is compared again, to name the change or to find
// that it is none (-0 for 0).
func compareSnapshot(snap, ref resource.Resource) error {
	if s, ok := snap.(identical); ok {
		if same, ok := s.Identical(ref); ok && same {
			return nil
		}
	}
	md, rmd := snap.Metadata(), ref.Metadata()
	if err := metadataMutation(md, rmd); err != nil {
		return err
	}
	var d differ
	spec := ref.Spec()
	if dif := d.diff(reflect.ValueOf(spec), reflect.ValueOf(snap.Spec())); dif != nil {
		was, now := dif.was, dif.now
		if redacts(spec) {
			was, now = redacted, redacted
		}
		return &MutationError{Resource: resource.PointerOf(rmd), Version: rmd.Version(), Path: dif.path("spec"), Was: was, Now: now}
	}
	return nil
}

// redacted stands for the values of a spec that holds secrets in a
// mutation report.
const redacted = "<redacted>"

var redacterType = reflect.TypeFor[resource.SpecRedacter]()

// redacts reports whether spec holds secrets (resource.SpecRedacter, on
// its value or its pointer): a report then names the changed part, never
// its values.
func redacts(spec any) bool {
	if _, ok := spec.(resource.SpecRedacter); ok {
		return true
	}
	t := reflect.TypeOf(spec)
	return t != nil && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(redacterType)
}

// metadataMutation describes the first difference of md, a snapshot's
// metadata, from rmd, its reference copy's; nil when there is none.
func metadataMutation(md, rmd *resource.Metadata) error {
	mutation := func(path string, was, now any) error {
		return &MutationError{Resource: resource.PointerOf(rmd), Version: rmd.Version(), Path: path, Was: fmt.Sprint(was), Now: fmt.Sprint(now)}
	}
	switch {
	case md.Namespace() != rmd.Namespace() || md.Type() != rmd.Type() || md.ID() != rmd.ID():
		return mutation("metadata (identity)", resource.PointerString(rmd), resource.PointerString(md))
	case !md.Version().Equal(rmd.Version()):
		return mutation("metadata.version", rmd.Version(), md.Version())
	case md.Phase() != rmd.Phase():
		return mutation("metadata.phase", rmd.Phase(), md.Phase())
	case md.Owner() != rmd.Owner():
		return mutation("metadata.owner", rmd.Owner(), md.Owner())
	case !md.Created().Equal(rmd.Created()):
		return mutation("metadata.created", rmd.Created(), md.Created())
	case !md.Updated().Equal(rmd.Updated()):
		return mutation("metadata.updated", rmd.Updated(), md.Updated())
	case !md.Labels().Equal(*rmd.Labels()):
		return mutation("metadata.labels", rmd.Labels().Raw(), md.Labels().Raw())
	case !md.Annotations().Equal(*rmd.Annotations()):
		return mutation("metadata.annotations", rmd.Annotations().Raw(), md.Annotations().Raw())
	case !slices.Equal(*md.Finalizers(), *rmd.Finalizers()):
		return mutation("metadata.finalizers", *rmd.Finalizers(), *md.Finalizers())
	}
	return nil
}

// identical is implemented by typed resources: a comparison by memory,
// in bulk where the memory is plain.
type identical interface {
	Identical(other resource.Resource) (identical, ok bool)
}

// differ finds the first difference between two values of one type.
type differ struct {
	// seen are the reference pairs being compared, so that cycles end;
	// made on first use.
	seen map[visit]bool
}

type visit struct {
	a, b unsafe.Pointer
	t    reflect.Type
	len  int
}

// visiting reports whether the pair k is already being compared, and
// remembers it.
func (d *differ) visiting(k visit) bool {
	if d.seen == nil {
		d.seen = map[visit]bool{}
	}
	if d.seen[k] {
		return true
	}
	d.seen[k] = true
	return false
}

// difference is a difference found by a differ: where, and both values.
// Its steps are added as the comparison returns, innermost first, so
// that a comparison that finds none formats no path.
type difference struct {
	steps    []step
	was, now string
}

// step is one step of the path to a difference: a field name (".Name"),
// an index or key ("[2]", "[\"k\"]"), or a dereference (deref).
type step struct {
	text  string
	deref bool
}

func (dif *difference) add(s step) *difference {
	dif.steps = append(dif.steps, s)
	return dif
}

// path returns the path of the difference from root.
func (dif *difference) path(root string) string {
	p := root
	for _, s := range slices.Backward(dif.steps) {
		if s.deref {
			p = "(*" + p + ")"
		} else {
			p += s.text
		}
	}
	return p
}

func differs(a, b reflect.Value) *difference {
	return &difference{was: describe(a), now: describe(b)}
}

// sameScalar compares two values of one scalar kind (booleans, numbers,
// strings, and funcs, channels and unsafe pointers by address); scalar is
// false for any other kind.
func sameScalar(a, b reflect.Value) (same, scalar bool) {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint(), true
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y)), true
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex(), true
	case reflect.String:
		return a.String() == b.String(), true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.Pointer() == b.Pointer(), true
	}
	return false, false
}

// diff returns the first difference between a (as stored) and b (as
// found), or nil when there is none.
func (d *differ) diff(a, b reflect.Value) *difference {
	if a.IsValid() != b.IsValid() {
		return differs(a, b)
	}
	if !a.IsValid() {
		return nil
	}
	if a.Type() != b.Type() {
		return &difference{was: a.Type().String(), now: b.Type().String()}
	}
	if same, scalar := sameScalar(a, b); scalar {
		if !same {
			return differs(a, b)
		}
		return nil
	}
	same := true
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			same = a.IsNil() == b.IsNil()
			break
		}
		if a.Kind() == reflect.Interface {
			return d.diff(a.Elem(), b.Elem())
		}
		if a.UnsafePointer() == b.UnsafePointer() || d.visiting(visit{a: a.UnsafePointer(), b: b.UnsafePointer(), t: a.Type()}) {
			return nil
		}
		if dif := d.diff(a.Elem(), b.Elem()); dif != nil {
			return dif.add(step{deref: true})
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return differs(a, b)
		}
		if a.Len() == 0 || a.UnsafePointer() == b.UnsafePointer() || bulkEqual(a, b) ||
			d.visiting(visit{a: a.UnsafePointer(), b: b.UnsafePointer(), t: a.Type(), len: a.Len()}) {
			return nil
		}
		return d.diffElems(a, b)
	case reflect.Array:
		return d.diffElems(a, b)
	case reflect.Map:
		return d.diffMaps(a, b)
	case reflect.Struct:
		for i := range a.NumField() {
			if dif := d.diff(a.Field(i), b.Field(i)); dif != nil {
				return dif.add(step{text: "." + a.Type().Field(i).Name})
			}
		}
	}
	if !same {
		return differs(a, b)
	}
	return nil
}

// bulkEqual reports whether two slices of one length, whose elements are
// numbers or booleans (values without padding whose memory is their
// value), hold the same bytes; false for other elements. Floats are
// compared as bits: the same bits are equal, others are compared one by
// one.
func bulkEqual(a, b reflect.Value) bool {
	switch a.Type().Elem().Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
	default:
		return false
	}
	n := uintptr(a.Len()) * a.Type().Elem().Size()
	// The views are the arrays of the two slices, read as bytes.
	return bytes.Equal(unsafe.Slice((*byte)(a.UnsafePointer()), n), unsafe.Slice((*byte)(b.UnsafePointer()), n))
}

// diffElems compares the elements of two slices or arrays of one length.
func (d *differ) diffElems(a, b reflect.Value) *difference {
	for i := range a.Len() {
		if dif := d.diff(a.Index(i), b.Index(i)); dif != nil {
			return dif.add(step{text: "[" + strconv.Itoa(i) + "]"})
		}
	}
	return nil
}

// diffMaps compares two maps.
func (d *differ) diffMaps(a, b reflect.Value) *difference {
	if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
		return differs(a, b)
	}
	if a.Len() == 0 || a.UnsafePointer() == b.UnsafePointer() || d.visiting(visit{a: a.UnsafePointer(), b: b.UnsafePointer(), t: a.Type()}) {
		return nil
	}
	it := a.MapRange()
	for it.Next() {
		k := it.Key()
		bv := b.MapIndex(k)
		if !bv.IsValid() {
			return (&difference{was: describe(it.Value()), now: "absent"}).add(step{text: "[" + describe(k) + "]"})
		}
		if dif := d.diff(it.Value(), bv); dif != nil {
			return dif.add(step{text: "[" + describe(k) + "]"})
		}
	}
	return nil
}

// describe formats a value for a report, unexported parts included.
func describe(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	if v.CanInterface() {
		return fmt.Sprintf("%#v", v.Interface())
	}
	switch v.Kind() {
	case reflect.Bool:
		return fmt.Sprint(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fmt.Sprint(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprint(v.Uint())
	case reflect.Float32, reflect.Float64:
		return fmt.Sprint(v.Float())
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	case reflect.Slice, reflect.Map:
		if v.IsNil() {
			return "nil"
		}
		return fmt.Sprintf("%s of length %d", v.Type(), v.Len())
	}
	return v.Type().String()
}
