package inmem

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// compareSnapshot returns a *MutationError describing the first part of
// snap that differs from ref, its reference copy, or nil when none does.
// It compares memory (by reflection), never by the resource's own methods
// beyond Metadata and Spec, so an Equal method that ignores a field does
// not hide a change to it.
func compareSnapshot(snap, ref resource.Resource) error {
	md, rmd := snap.Metadata(), ref.Metadata()
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
	d := differ{seen: map[visit]bool{}}
	if path, was, now, ok := d.diff("spec", reflect.ValueOf(ref.Spec()), reflect.ValueOf(snap.Spec())); ok {
		return mutation(path, was, now)
	}
	return nil
}

// differ finds the first difference between two values of one type.
type differ struct {
	// seen are the pointer pairs being compared, so that cycles end.
	seen map[visit]bool
}

type visit struct {
	a, b unsafe.Pointer
	t    reflect.Type
}

// diff returns the path of the first difference between a (as stored)
// and b (as found) and a description of both, and whether there is one.
//
// One switch over every kind of value: splitting it would only scatter
// the cases.
func (d *differ) diff(path string, a, b reflect.Value) (string, string, string, bool) {
	if a.IsValid() != b.IsValid() {
		return path, describe(a), describe(b), true
	}
	if !a.IsValid() {
		return "", "", "", false
	}
	if a.Type() != b.Type() {
		return path, a.Type().String(), b.Type().String(), true
	}
	differs := false
	switch a.Kind() {
	case reflect.Bool:
		differs = a.Bool() != b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		differs = a.Int() != b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		differs = a.Uint() != b.Uint()
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		differs = x != y && !(math.IsNaN(x) && math.IsNaN(y))
	case reflect.Complex64, reflect.Complex128:
		differs = a.Complex() != b.Complex()
	case reflect.String:
		differs = a.String() != b.String()
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		differs = a.Pointer() != b.Pointer()
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			differs = a.IsNil() != b.IsNil()
			break
		}
		if a.Kind() == reflect.Pointer {
			k := visit{a.UnsafePointer(), b.UnsafePointer(), a.Type()}
			if d.seen[k] {
				return "", "", "", false
			}
			d.seen[k] = true
			return d.diff("(*"+path+")", a.Elem(), b.Elem())
		}
		return d.diff(path, a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path, describe(a), describe(b), true
		}
		return d.diffElems(path, a, b)
	case reflect.Array:
		return d.diffElems(path, a, b)
	case reflect.Map:
		return d.diffMaps(path, a, b)
	case reflect.Struct:
		for i := range a.NumField() {
			if p, x, y, ok := d.diff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); ok {
				return p, x, y, true
			}
		}
	}
	if differs {
		return path, describe(a), describe(b), true
	}
	return "", "", "", false
}

// diffElems compares the elements of two slices or arrays of one length.
func (d *differ) diffElems(path string, a, b reflect.Value) (string, string, string, bool) {
	for i := range a.Len() {
		if p, x, y, ok := d.diff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); ok {
			return p, x, y, true
		}
	}
	return "", "", "", false
}

// diffMaps compares two maps.
func (d *differ) diffMaps(path string, a, b reflect.Value) (string, string, string, bool) {
	if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
		return path, describe(a), describe(b), true
	}
	it := a.MapRange()
	for it.Next() {
		k := it.Key()
		kp := fmt.Sprintf("%s[%s]", path, describe(k))
		bv := b.MapIndex(k)
		if !bv.IsValid() {
			return kp, describe(it.Value()), "absent", true
		}
		if p, x, y, ok := d.diff(kp, it.Value(), bv); ok {
			return p, x, y, true
		}
	}
	return "", "", "", false
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
