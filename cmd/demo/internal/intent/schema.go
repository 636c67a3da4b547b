package intent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// jsonKind is the JSON kind a schema node accepts.
type jsonKind int

const (
	kindObject jsonKind = iota
	kindArray
	kindString
	kindInteger
)

// node describes the expected shape of a JSON value.
type node struct {
	fields   map[string]*node // kindObject: the known fields
	elem     *node            // kindArray: the element shape
	required []string         // kindObject: fields that must be present
	kind     jsonKind
}

func (n *node) describe() string {
	switch n.kind {
	case kindObject:
		return "an object"
	case kindArray:
		return "an array"
	case kindString:
		return "a string"
	default:
		return "an integer"
	}
}

func (n *node) fieldNames() string {
	names := make([]string, 0, len(n.fields))
	for k := range n.fields {
		names = append(names, strconv.Quote(k))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// fileSchema is the shape of an intent file.
var fileSchema = func() *node {
	str := &node{kind: kindString}
	integer := &node{kind: kindInteger}
	strs := &node{kind: kindArray, elem: str}
	route := &node{kind: kindObject, required: []string{"destination", "gateway"}, fields: map[string]*node{
		"destination": str, "gateway": str, "metric": integer,
	}}
	link := &node{kind: kindObject, required: []string{"name"}, fields: map[string]*node{
		"name": str, "mtu": integer, "addresses": strs, "gateway": str,
		"routes": {kind: kindArray, elem: route}, "dns": strs,
	}}
	return &node{kind: kindObject, required: []string{"links"}, fields: map[string]*node{
		"links": {kind: kindArray, elem: link},
	}}
}()

// located is a problem at a byte offset, before it is turned into a
// [Problem] with a line and column.
type located struct {
	field, msg string
	off        int
}

// walker checks a syntactically valid JSON document against a schema and
// records the offset at which each value starts, by field path.
type walker struct {
	dec      *json.Decoder
	pos      map[string]int // field path -> offset of the value
	data     []byte
	problems []located
}

func newWalker(data []byte) *walker {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &walker{data: data, dec: dec, pos: make(map[string]int)}
}

func (w *walker) problem(off int, field, format string, args ...any) {
	w.problems = append(w.problems, located{off: off, field: field, msg: fmt.Sprintf(format, args...)})
}

// next reads a token and returns it with the offset at which it starts.
func (w *walker) next() (json.Token, int, error) {
	off := int(w.dec.InputOffset())
	tok, err := w.dec.Token()
	for off < len(w.data) && strings.IndexByte(" \t\r\n,:", w.data[off]) >= 0 {
		off++
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return tok, off, err
}

func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// value walks one value at path; want == nil accepts anything.
func (w *walker) value(path string, want *node) error {
	tok, off, err := w.next()
	if err != nil {
		return err
	}
	w.pos[path] = off
	what := func() string {
		if path == "" {
			return "the document"
		}
		return path
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return w.object(path, off, want)
		}
		if want != nil && want.kind != kindArray {
			w.problem(off, path, "must be %s, got an array", want.describe())
			want = nil
		}
		var elem *node
		if want != nil {
			elem = want.elem
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(path+"["+strconv.Itoa(i)+"]", elem); err != nil {
				return err
			}
		}
		_, _, err = w.next() // ']'
		return err
	case string:
		if want != nil && want.kind != kindString {
			w.problem(off, path, "must be %s, got a string", want.describe())
		}
	case json.Number:
		if want == nil {
			return nil
		}
		if want.kind != kindInteger {
			w.problem(off, path, "must be %s, got a number", want.describe())
		} else if _, err := strconv.ParseInt(t.String(), 10, 64); err != nil {
			w.problem(off, path, "must be an integer, got %s", t)
		}
	case bool:
		if want != nil {
			w.problem(off, path, "must be %s, got %t", want.describe(), t)
		}
	case nil:
		if want != nil {
			w.problem(off, path, "must be %s, got null", want.describe())
		}
	default:
		return fmt.Errorf("%s: unexpected token %v", what(), tok)
	}
	return nil
}

// object walks the members of an object whose '{' is at off.
func (w *walker) object(path string, off int, want *node) error {
	if want != nil && want.kind != kindObject {
		w.problem(off, path, "must be %s, got an object", want.describe())
		want = nil
	}
	seen := make(map[string]bool)
	for w.dec.More() {
		tok, koff, err := w.next()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		field := joinField(path, key)
		var child *node
		switch {
		case want == nil:
		case seen[key]:
			w.problem(koff, field, "duplicate field")
		case want.fields[key] == nil:
			w.problem(koff, field, "unknown field (known fields: %s)", want.fieldNames())
		default:
			child = want.fields[key]
		}
		seen[key] = true
		if err := w.value(field, child); err != nil {
			return err
		}
	}
	if _, _, err := w.next(); err != nil { // '}'
		return err
	}
	if want != nil {
		for _, r := range want.required {
			if !seen[r] {
				w.problem(off, joinField(path, r), "required field is missing")
			}
		}
	}
	return nil
}
