package sim

import (
	"cmp"
	"slices"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

// View is a read-only view of the committed state: every resource of
// every kind, as the state stores it. Its resources are the state's shared
// snapshots: a check never changes them (rule S7). A View passed to an
// invariant is valid during the call only.
type View struct {
	res map[resource.Pointer]resource.Resource
}

// Get returns the resource ptr points to, and whether it exists.
func (v View) Get(ptr resource.Pointer) (resource.Resource, bool) {
	r, ok := v.res[resource.NewPointer(ptr.Namespace(), ptr.Type(), ptr.ID())]
	return r, ok
}

// List returns the resources of kind, sorted by ID.
func (v View) List(kind resource.Kind) []resource.Resource {
	var out []resource.Resource
	for p, r := range v.res {
		if p.Namespace() == kind.Namespace() && p.Type() == kind.Type() {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b resource.Resource) int { return cmp.Compare(a.Metadata().ID(), b.Metadata().ID()) })
	return out
}

// All returns every resource, sorted by type, namespace and ID.
func (v View) All() []resource.Resource {
	out := make([]resource.Resource, 0, len(v.res))
	for _, r := range v.res {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b resource.Resource) int { return comparePointers(a.Metadata(), b.Metadata()) })
	return out
}

// Len returns the number of resources.
func (v View) Len() int { return len(v.res) }

// snapshot returns a View that stays valid: a copy of the map (the
// resources are immutable snapshots).
func (v View) snapshot() View {
	m := make(map[resource.Pointer]resource.Resource, len(v.res))
	for k, r := range v.res {
		m[k] = r
	}
	return View{res: m}
}

func comparePointers(a, b resource.Pointer) int {
	return cmp.Or(cmp.Compare(a.Type(), b.Type()), cmp.Compare(a.Namespace(), b.Namespace()), cmp.Compare(a.ID(), b.ID()))
}

// Get returns the resource of type T with the ID id in T's default
// namespace, and whether it exists (as T).
func Get[T typed.ResourceWithDefinition](v View, id resource.ID) (T, bool) {
	var zero T
	def := zero.Definition()
	r, ok := v.Get(resource.NewPointer(def.DefaultNamespace, def.Type, id))
	if !ok {
		return zero, false
	}
	t, ok := r.(T)
	return t, ok
}

// List returns the resources of type T in T's default namespace, sorted
// by ID.
func List[T typed.ResourceWithDefinition](v View) []T {
	var zero T
	def := zero.Definition()
	var out []T
	for _, r := range v.List(resource.NewKind(def.DefaultNamespace, def.Type)) {
		if t, ok := r.(T); ok {
			out = append(out, t)
		}
	}
	return out
}
