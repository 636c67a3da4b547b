package yamlcodec

import "fmt"

// JSONable returns v, a value a YAML decoder gave (a document of
// resources or of changes written by hand), in a form encoding/json
// encodes: every map[any]any becomes a map[string]any, each key formatted
// with fmt.Sprint (YAML reads "1: x" with an integer key, JSON has
// strings), at any depth. Maps with string keys and slices are changed in
// place; other values are returned as they are.
func JSONable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = JSONable(e)
		}
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = JSONable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = JSONable(e)
		}
	}
	return v
}
