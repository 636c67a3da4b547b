package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/graphkinds"
	"github.com/resgraph/resgraph/pkg/resource"
)

func kindsOf(g *controller.DependencyGraph) []resource.KindKey { return graphkinds.Kinds(g) }

// diff returns what changed from the state before to the state after
// (each sorted by kind and ID), versions and times aside.
func diff(before, after []resource.Resource) []ResourceChange {
	b, a := byPointer(before), byPointer(after)
	keys := slices.Collect(maps.Keys(b))
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, comparePointers)
	var out []ResourceChange
	for _, k := range keys {
		x, y := b[k], a[k]
		switch {
		case x == nil:
			out = append(out, ResourceChange{Op: Create, Pointer: k, After: y, Fields: fields(nil, y)})
		case y == nil:
			out = append(out, ResourceChange{Op: Destroy, Pointer: k, Before: x})
		default:
			if f := fields(x, y); len(f) > 0 {
				out = append(out, ResourceChange{Op: Update, Pointer: k, Before: x, After: y, Fields: f})
			}
		}
	}
	return out
}

func byPointer(rs []resource.Resource) map[resource.PointerKey]resource.Resource {
	m := make(map[resource.PointerKey]resource.Resource, len(rs))
	for _, r := range rs {
		m[resource.PointerOf(r.Metadata())] = r
	}
	return m
}

func comparePointers(a, b resource.PointerKey) int {
	return cmp.Or(a.Kind().Compare(b.Kind()), cmp.Compare(a.ID(), b.ID()))
}

// fields lists the fields that differ between a and b (a nil: every field
// of b): the phase, the owner, the finalizers, each label and annotation,
// and each field of the spec by its JSON path (rule PL4).
func fields(a, b resource.Resource) []FieldChange {
	var out []FieldChange
	add := func(path string, x, y any) {
		if xs, ys := text(x), text(y); xs != ys {
			out = append(out, FieldChange{Path: path, Before: xs, After: ys})
		}
	}
	var am resource.Metadata
	if a != nil {
		am = *a.Metadata()
	}
	bm := b.Metadata()
	if a != nil {
		add("phase", am.Phase().String(), bm.Phase().String())
	}
	add("owner", am.Owner(), bm.Owner())
	add("finalizers", []resource.Finalizer(*am.Finalizers()), []resource.Finalizer(*bm.Finalizers()))
	mapFields(add, "labels", am.Labels().Raw(), bm.Labels().Raw())
	mapFields(add, "annotations", am.Annotations().Raw(), bm.Annotations().Raw())
	var as any
	if a != nil {
		as = jsonOf(a.Spec())
	}
	specFields(add, "spec", as, jsonOf(b.Spec()), a != nil)
	return out
}

func mapFields(add func(string, any, any), path string, a, b map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(a, b))) {
		x, xok := a[k]
		y, yok := b[k]
		if xok != yok || x != y {
			add(path+"."+k, optional(x, xok), optional(y, yok))
		}
	}
}

func mergeKeys(a, b map[string]string) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

func optional(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

// specFields adds the differences of two specs in their JSON form, field
// by field. In an update (not a creation), a list emptied or filled (the
// other side absent: null, or left out) goes element by element as one
// that shrank or grew does.
func specFields(add func(string, any, any), path string, a, b any, update bool) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok || a == nil && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			specFields(add, path+"."+k, am[k], bm[k], update)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if update && (aok && b == nil || a == nil && bok) {
		aok, bok = true, true
	}
	if aok && bok {
		if scalars(al) && scalars(bl) && len(al) != len(bl) {
			listFields(add, path, al, bl)
			return
		}
		for i := range max(len(al), len(bl)) {
			specFields(add, fmt.Sprintf("%s[%d]", path, i), at(al, i), at(bl, i), update)
		}
		return
	}
	add(path, a, b)
}

// listFields adds a list of scalars that grew or shrank as the elements
// it lost and those it gained.
func listFields(add func(string, any, any), path string, a, b []any) {
	count := map[string]int{}
	for _, x := range a {
		count[text(x)]++
	}
	for _, y := range b {
		count[text(y)]--
	}
	for _, x := range a {
		if k := text(x); count[k] > 0 {
			count[k]--
			add(path, k, nil)
		}
	}
	for _, y := range b {
		if k := text(y); count[k] < 0 {
			count[k]++
			add(path, nil, k)
		}
	}
}

func scalars(l []any) bool {
	for _, x := range l {
		switch x.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

func at(l []any, i int) any {
	if i < len(l) {
		return l[i]
	}
	return nil
}

// jsonOf returns a spec's JSON form as generic values (the spec itself
// when it has none).
func jsonOf(spec any) any {
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Sprintf("%+v", spec)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	return v
}

// text renders a value of a field ("" for none).
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []resource.Finalizer:
		if len(v) == 0 {
			return ""
		}
		return fmt.Sprint(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
