package protobuf

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"time"
)

var (
	timeType          = reflect.TypeFor[time.Time]()
	binaryMarshaler   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// maxField is the largest protobuf field number.
const maxField = 1<<29 - 1

// encodesItself reports whether protoenc encodes values of t with their
// own MarshalBinary (t or *t implements both directions).
func encodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return (t.Implements(binaryMarshaler) || pt.Implements(binaryMarshaler)) && pt.Implements(binaryUnmarshaler)
}

// checker walks a spec type for what protobuf would drop or cannot
// encode; protoenc's own validation (protoenc.StructFields) covers the
// rest.
type checker struct {
	seen map[reflect.Type]bool
}

// check returns an error, naming the path, when values of t would not
// survive protobuf.
func (c *checker) check(t reflect.Type, path string) error {
	if c.seen[t] || encodesItself(t) || t == timeType {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		c.seen[t] = true
		return c.checkStruct(t, path)
	case reflect.Pointer:
		switch t.Elem().Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			return fmt.Errorf("%s: a pointer to a %s (%s): protobuf cannot tell a pointer to an empty or nil one from a nil pointer", path, t.Elem().Kind(), t)
		}
		return c.check(t.Elem(), path)
	case reflect.Slice, reflect.Array:
		return c.check(t.Elem(), path+"[]")
	case reflect.Map:
		if err := c.check(t.Key(), path+"[key]"); err != nil {
			return err
		}
		return c.check(t.Elem(), path+"[]")
	case reflect.Interface, reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128,
		reflect.Uintptr, reflect.UnsafePointer:
		return fmt.Errorf("%s: a %s (%s) has no protobuf encoding", path, t.Kind(), t)
	}
	return nil
}

// checkStruct checks the fields of struct t.
func (c *checker) checkStruct(t reflect.Type, path string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		fpath := path + "." + f.Name
		if !f.IsExported() {
			return fmt.Errorf("%s: unexported field: protobuf drops it (export it with a protobuf tag, or implement encoding.BinaryMarshaler on %s)", fpath, t)
		}
		if f.Anonymous && derefStruct(f.Type) {
			if err := c.check(f.Type, fpath); err != nil {
				return err
			}
			continue
		}
		tag := f.Tag.Get("protobuf")
		n, err := strconv.Atoi(tag)
		switch {
		case tag == "-" || (err == nil && n == 0):
			return fmt.Errorf("%s: tagged protobuf:%q, which drops the field: give it a field number", fpath, tag)
		case err != nil || n < 0 || n > maxField:
			return fmt.Errorf("%s: protobuf tag %q is not a field number from 1 to %d", fpath, tag, maxField)
		}
		if err := c.check(f.Type, fpath); err != nil {
			return err
		}
	}
	return nil
}

// derefStruct reports whether t is a struct or a pointer to one.
func derefStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// mayLose reports whether some values of t have no protobuf encoding
// although t has one: t holds, at some depth, a slice whose elements are
// pointers (a nil one is dropped) or encode as bytes (an empty one is
// dropped: []byte, byte arrays, types with MarshalBinary).
func mayLose(t reflect.Type) bool {
	return losing(t, map[reflect.Type]bool{})
}

func losing(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] || t == timeType || encodesItself(t) {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Slice:
		e := t.Elem()
		switch {
		case e.Kind() == reflect.Pointer, e.Kind() == reflect.Slice, e.Kind() == reflect.Array, encodesItself(e):
			return true
		}
		return losing(e, seen)
	case reflect.Pointer, reflect.Array:
		return losing(t.Elem(), seen)
	case reflect.Map:
		return losing(t.Key(), seen) || losing(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if losing(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
