package codec

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// checkJSON returns an error when encoding/json would not round-trip every
// value of type t: see the package documentation for what it refuses.
// Types that implement their own JSON (or text) encoding in both
// directions are trusted.
func checkJSON(t reflect.Type) error {
	c := jsonChecker{seen: map[reflect.Type]bool{}}
	return c.check(t, t.String())
}

type jsonChecker struct {
	seen map[reflect.Type]bool // types checked or being checked
}

// encodesItself reports whether t has its own JSON or text encoding in
// both directions, and an error when it has one direction only.
func encodesItself(t reflect.Type) (bool, error) {
	pt := reflect.PointerTo(t)
	enc := t.Implements(jsonMarshaler) || pt.Implements(jsonMarshaler) ||
		t.Implements(textMarshaler) || pt.Implements(textMarshaler)
	if !enc {
		return false, nil
	}
	if !pt.Implements(jsonUnmarshaler) && !pt.Implements(textUnmarshaler) {
		return false, fmt.Errorf("%s encodes itself (MarshalJSON or MarshalText) but cannot decode itself", t)
	}
	return true, nil
}

func (c *jsonChecker) check(t reflect.Type, path string) error {
	if c.seen[t] {
		return nil
	}
	if own, err := encodesItself(t); own || err != nil {
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return nil
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return c.check(t.Elem(), path+"[]")
	case reflect.Map:
		if err := checkMapKey(t.Key()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return c.check(t.Elem(), path+"[]")
	case reflect.Struct:
		c.seen[t] = true
		return c.checkStruct(t, path, map[string]string{})
	default:
		return fmt.Errorf("%s: a %s (%s) has no lossless JSON encoding", path, t.Kind(), t)
	}
}

// checkMapKey returns an error for a map key type JSON cannot round-trip.
func checkMapKey(k reflect.Type) error {
	if reflect.PointerTo(k).Implements(textUnmarshaler) && (k.Implements(textMarshaler) || reflect.PointerTo(k).Implements(textMarshaler)) {
		return nil
	}
	switch k.Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return nil
	}
	return fmt.Errorf("map key type %s has no JSON encoding", k)
}

// checkStruct checks the fields of struct t; names maps the JSON names
// taken so far (shared with the structs embedded in it, whose fields JSON
// flattens) to the field that took them.
func (c *jsonChecker) checkStruct(t reflect.Type, path string, names map[string]string) error {
	for i := range t.NumField() {
		f := t.Field(i)
		fpath := path + "." + f.Name
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Tag.Get("json") == "-" {
			return fmt.Errorf("%s: field tagged json:\"-\": JSON drops it", fpath)
		}
		ft := f.Type
		if f.Anonymous && name == "" {
			st := ft
			if st.Kind() == reflect.Pointer {
				st = st.Elem()
			}
			if st.Kind() == reflect.Struct {
				if !f.IsExported() && ft.Kind() == reflect.Pointer {
					return fmt.Errorf("%s: embedded pointer to an unexported struct: JSON cannot decode it", fpath)
				}
				if own, err := encodesItself(st); err != nil || own {
					if err != nil {
						return fmt.Errorf("%s: %w", fpath, err)
					}
					return fmt.Errorf("%s: embedded type with its own JSON encoding: JSON would use it for the whole struct", fpath)
				}
				if err := c.checkStruct(st, fpath, names); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			return fmt.Errorf("%s: unexported field: JSON drops it (export it, or implement SpecMarshaler)", fpath)
		}
		if name == "" {
			name = f.Name
		}
		if prev, taken := names[name]; taken {
			return fmt.Errorf("%s: JSON name %q is also the name of %s: JSON would drop both", fpath, name, prev)
		}
		names[name] = fpath
		// omitempty drops an empty slice or map, which decodes as nil:
		// equal under R1 (package typed), so it is lossless. omitzero
		// drops a value whose IsZero method says so, which decodes as the
		// zero value: lossless only when IsZero means that (time.Time's
		// does, up to the instant, which is what R1 compares).
		if hasOpt(opts, "omitzero") && ft != timeType && hasIsZero(ft) {
			return fmt.Errorf("%s: omitzero on %s, whose IsZero method may call a non-zero value zero: JSON would decode it as the zero value (drop omitzero, or implement SpecMarshaler)", fpath, ft)
		}
		if err := c.check(ft, fpath); err != nil {
			return err
		}
	}
	return nil
}

var timeType = reflect.TypeFor[time.Time]()

// hasIsZero reports whether t or *t has an IsZero() bool method.
func hasIsZero(t reflect.Type) bool {
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		if m, ok := tt.MethodByName("IsZero"); ok && m.Type.NumIn() == 1 && m.Type.NumOut() == 1 && m.Type.Out(0).Kind() == reflect.Bool {
			return true
		}
	}
	return false
}

// hasOpt reports whether the comma-separated tag options include opt.
func hasOpt(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}
