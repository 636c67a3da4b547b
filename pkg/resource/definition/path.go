package definition

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Path is a parsed column path: a sequence of object keys and list
// indexes into a spec's JSON form.
type Path struct {
	steps []step
}

// step is one key (index < 0) or one index.
type step struct {
	key   string
	index int
}

// ParsePath parses a column path: "." (the whole spec), or a sequence of
// ".key" (an object's member; a key is any run of characters other than
// '.', '[' and ']') and "[n]" (a list's element n, from 0), starting with
// a '.': ".mtu", ".link.name", ".addresses[0]", ".routes[2].gateway".
func ParsePath(s string) (Path, error) {
	if s == "." {
		return Path{}, nil
	}
	if !strings.HasPrefix(s, ".") {
		return Path{}, fmt.Errorf("path %q does not start with '.'", s)
	}
	var p Path
	for rest := s; rest != ""; {
		switch rest[0] {
		case '.':
			end := strings.IndexAny(rest[1:], ".[]")
			if end < 0 {
				end = len(rest) - 1
			}
			if end == 0 {
				return Path{}, fmt.Errorf("path %q: empty key", s)
			}
			p.steps = append(p.steps, step{key: rest[1 : 1+end], index: -1})
			rest = rest[1+end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return Path{}, fmt.Errorf("path %q: '[' without ']'", s)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 || rest[1] == '+' {
				return Path{}, fmt.Errorf("path %q: index %q is not a number from 0", s, rest[1:end])
			}
			p.steps = append(p.steps, step{index: n})
			rest = rest[end+1:]
		default:
			return Path{}, fmt.Errorf("path %q: unexpected %q", s, rest[0])
		}
	}
	return p, nil
}

// Lookup returns the value the path selects in doc, a spec decoded from
// JSON into generic values (map[string]any, []any, string, float64,
// json.Number, bool, nil), and whether it is there.
func (p Path) Lookup(doc any) (any, bool) {
	for _, s := range p.steps {
		if s.index < 0 {
			m, ok := doc.(map[string]any)
			if !ok {
				return nil, false
			}
			if doc, ok = m[s.key]; !ok {
				return nil, false
			}
			continue
		}
		l, ok := doc.([]any)
		if !ok || s.index >= len(l) {
			return nil, false
		}
		doc = l[s.index]
	}
	return doc, true
}

// Value returns the text of the column for a spec decoded from JSON into
// generic values (see [Path.Lookup]): a string as is, a number or boolean
// in JSON's form, a list or object as compact JSON, and "" when the path
// selects nothing (or does not parse).
func (c Column) Value(spec any) string {
	p, err := ParsePath(c.Path)
	if err != nil {
		return ""
	}
	v, ok := p.Lookup(spec)
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
