// Package yamljson turns what a YAML decoder gives (maps with keys of any
// type) into what encoding/json encodes, for the readers of YAML files of
// resources (resgraphctl's manifests, a plan's change files).
package yamljson

import "fmt"

// JSONable returns v with every map[any]any turned into a map[string]any
// (each key formatted with fmt.Sprint: YAML reads "1: x" with an integer
// key, JSON has strings), at any depth. Maps with string keys and slices
// are changed in place; other values are returned as they are.
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
