package codec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// UnknownFieldError reports a key of a spec given as input (JSON a user
// or a client wrote) that the spec's Go type has no field for, or that
// names a field only by a different case: encoding/json would drop the
// first and fill the second by its case-insensitive match, so the written
// spec would not be the one given. [Registry.DecodeSpecInput] returns it
// wrapped in a [*DecodeError]. It belongs to the invalid-input class.
type UnknownFieldError struct {
	// Path is the key's place from the spec, as "spec.Bogus",
	// "spec.Routes[2].Gw" or `spec.Peers["a"].Bogus`, in the keys given.
	Path string
	// Field is the key as given.
	Field string
	// Type is the Go type of the struct that has no field Field.
	Type string
	// CaseOf is the field's JSON name the key matches only by case; empty
	// when it matches none.
	CaseOf string
}

// Error names the key, its path and the type that lacks it.
func (e *UnknownFieldError) Error() string {
	if e.CaseOf != "" {
		return fmt.Sprintf("%s: %s has no field %q: its field is %q (field names are matched exactly, case included)", e.Path, e.Type, e.Field, e.CaseOf)
	}
	return fmt.Sprintf("%s: %s has no field %q", e.Path, e.Type, e.Field)
}

// InvalidError marks the error as of the invalid-input class of the state
// package (state.IsInvalidError).
func (*UnknownFieldError) InvalidError() {}

// DecodeSpecInput is [Registry.DecodeSpec] for a spec given as input — a
// JSON spec a user wrote (a change file, a create) or a client sent —
// rather than bytes a state stored: a key of a JSON spec that the spec's
// Go type has no field for, or that names a field only by a different
// case, is an [*UnknownFieldError] (wrapped in a [*DecodeError]), and
// nothing is decoded. Nested structs, embedded structs (their promoted
// fields), slices, arrays and map values are checked; map keys are free,
// a `json:"-"` field has no name, and a type that implements
// json.Unmarshaler or encoding.TextUnmarshaler (at any depth, the spec
// included) and a spec that decodes itself ([SpecUnmarshaler]) decide for
// themselves. A spec in another format decodes as DecodeSpec does.
//
// Stored bytes decode with DecodeSpec, which drops unknown keys, so that
// a field a later version of the spec removed leaves stored data readable:
// the strictness is for input, not for storage.
func (reg *Registry) DecodeSpecInput(md resource.Metadata, f Format, data []byte) (resource.Resource, error) {
	e := reg.lookup(md.Type())
	if e == nil {
		return nil, &UnknownTypeError{Type: md.Type()}
	}
	if f == FormatJSON && e.format == FormatJSON && e.specType != nil {
		if err := checkSpecFields(e.specType, data); err != nil {
			return nil, &DecodeError{Resource: resource.PointerString(&md), Err: err}
		}
	}
	return reg.DecodeSpec(md, f, data)
}

// checkSpecFields returns an *UnknownFieldError for the first key of the
// JSON data (keys in sorted order) that t has no exact field for. Data
// that is not JSON, or whose shape does not match t, is left for the
// decoder to refuse.
func checkSpecFields(t reflect.Type, data []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	return checkValue(t, v, "spec")
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decidesItself reports whether values of t (through a *t) decode
// themselves from JSON.
func decidesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

// checkValue checks the JSON value v, at path, against the Go type t.
func checkValue(t reflect.Type, v any, path string) error {
	for t.Kind() == reflect.Pointer {
		if decidesItself(t) {
			return nil
		}
		t = t.Elem()
	}
	if decidesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, _ := v.(map[string]any)
		return checkObject(t, obj, path)
	case reflect.Map:
		obj, _ := v.(map[string]any)
		for _, k := range sortedKeys(obj) {
			if err := checkValue(t.Elem(), obj[k], fmt.Sprintf("%s[%q]", path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, _ := v.([]any)
		for i, x := range arr {
			if err := checkValue(t.Elem(), x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObject checks the keys of the JSON object obj, at path, against
// the fields of the struct type t.
func checkObject(t reflect.Type, obj map[string]any, path string) error {
	fields := jsonFieldsOf(t)
	for _, k := range sortedKeys(obj) {
		ft, ok := fields[k]
		if !ok {
			return &UnknownFieldError{Path: path + "." + k, Field: k, Type: t.String(), CaseOf: foldMatch(fields, k)}
		}
		if err := checkValue(ft, obj[k], path+"."+k); err != nil {
			return err
		}
	}
	return nil
}

// foldMatch returns the name in fields that k matches only by case, or "".
func foldMatch(fields map[string]reflect.Type, k string) string {
	for _, name := range sortedKeys(fields) {
		if strings.EqualFold(name, k) {
			return name
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fieldCache holds jsonFieldsOf's answers by struct type.
var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFieldsOf returns the JSON names of the fields encoding/json decodes
// into the struct type t, with their types: exported fields by their tag's
// name (or their Go name), without `json:"-"` ones, and the fields of
// untagged embedded structs promoted, a shallower field hiding deeper ones
// of the same name, and a name at one depth that two fields share (none of
// them tagged, or both) belonging to neither, as encoding/json does.
func jsonFieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	level := []reflect.Type{t}
	seen := map[reflect.Type]bool{}
	for len(level) > 0 {
		var next []reflect.Type
		found := map[string]depthField{}
		for _, st := range level {
			if seen[st] {
				continue
			}
			seen[st] = true
			next = append(next, structFields(st, found)...)
		}
		for name, f := range found {
			if _, shallower := out[name]; !shallower && f.count == 1 {
				out[name] = f.typ
			}
			if _, shallower := out[name]; !shallower && f.count > 1 {
				out[name] = nil // ambiguous: hides deeper ones, names nothing
			}
		}
		level = next
	}
	for name, ft := range out {
		if ft == nil {
			delete(out, name)
		}
	}
	fieldCache.Store(t, out)
	return out
}

// depthField is a name found at one depth of a struct's embedding.
type depthField struct {
	typ    reflect.Type
	tagged bool
	count  int
}

// structFields adds the named fields of the struct type st to found and
// returns the struct types embedded without a name, for the next depth.
func structFields(st reflect.Type, found map[string]depthField) []reflect.Type {
	var embedded []reflect.Type
	for i := range st.NumField() {
		sf := st.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
			if name == "" && ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		addField(found, name, sf)
	}
	return embedded
}

// addField records the field sf under its JSON name (tag, or its Go name)
// at one depth, by encoding/json's rule: a tagged field beats an untagged
// one; two of a kind make the name ambiguous.
func addField(found map[string]depthField, tagName string, sf reflect.StructField) {
	name, tagged := tagName, tagName != ""
	if name == "" {
		name = sf.Name
	}
	f, ok := found[name]
	switch {
	case !ok || (tagged && !f.tagged):
		found[name] = depthField{typ: sf.Type, tagged: tagged, count: 1}
	case tagged == f.tagged:
		f.count++
		found[name] = f
	}
}
