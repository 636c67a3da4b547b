package definition

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Registry holds resource definitions (see the package documentation). The
// zero value is empty and ready for use; a Registry is safe for concurrent
// use, and reading it takes no lock.
type Registry struct {
	// tables is replaced whole by every registration (under mu), so
	// readers load it once.
	tables atomic.Pointer[tables]
	mu     sync.Mutex // serializes registrations
}

// tables are the published contents of a registry; never modified once
// published.
type tables struct {
	byType map[resource.Type]*Definition
	// byName maps every name (type and aliases), lowercased, to its type.
	byName map[string]resource.Type
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

func (r *Registry) load() *tables {
	if t := r.tables.Load(); t != nil {
		return t
	}
	return &tables{}
}

// Add registers d. It fails when d is not valid ([Definition.Validate]),
// when one of its names (type or alias, ignoring case) is already a name
// of another type, and when d's type is registered with another
// definition. Adding an equal definition again is a no-op.
func (r *Registry) Add(d Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	next, err := r.load().with(d)
	if err != nil {
		return err
	}
	if next != nil {
		r.tables.Store(next)
	}
	return nil
}

// Check reports whether [Registry.Add] would accept d, without adding it.
func (r *Registry) Check(d Definition) error {
	if err := d.Validate(); err != nil {
		return err
	}
	_, err := r.load().with(d)
	return err
}

// with returns the tables with d added, nil when d is there already.
func (t *tables) with(d Definition) (*tables, error) {
	if prev, ok := t.byType[d.Type]; ok {
		if prev.Equal(d) {
			return nil, nil
		}
		return nil, fmt.Errorf("definition of %q: registered already with another definition (%+v)", d.Type, *prev)
	}
	for _, n := range d.Names() {
		if other, ok := t.byName[strings.ToLower(n)]; ok {
			return nil, fmt.Errorf("definition of %q: the name %q is already a name of %q", d.Type, n, other)
		}
	}
	next := &tables{
		byType: make(map[resource.Type]*Definition, len(t.byType)+1),
		byName: make(map[string]resource.Type, len(t.byName)+1+len(d.Aliases)),
	}
	maps.Copy(next.byType, t.byType)
	maps.Copy(next.byName, t.byName)
	c := d.Clone()
	next.byType[d.Type] = &c
	for _, n := range d.Names() {
		next.byName[strings.ToLower(n)] = d.Type
	}
	return next, nil
}

// Get returns the definition of typ (a copy) and whether it is registered.
func (r *Registry) Get(typ resource.Type) (Definition, bool) {
	d, ok := r.load().byType[typ]
	if !ok {
		return Definition{}, false
	}
	return d.Clone(), true
}

// Resolve returns the definition whose type or alias is name, ignoring
// case, or an error naming the known types when there is none.
func (r *Registry) Resolve(name string) (Definition, error) {
	t := r.load()
	typ, ok := t.byName[strings.ToLower(name)]
	if !ok {
		return Definition{}, &UnknownNameError{Name: name, Known: slices.Sorted(maps.Keys(t.byType))}
	}
	return t.byType[typ].Clone(), nil
}

// All returns every definition, sorted by type.
func (r *Registry) All() []Definition {
	t := r.load()
	out := make([]Definition, 0, len(t.byType))
	for _, typ := range slices.Sorted(maps.Keys(t.byType)) {
		out = append(out, t.byType[typ].Clone())
	}
	return out
}

// Sensitive reports whether typ is registered as sensitive. It allocates
// nothing.
func (r *Registry) Sensitive(typ resource.Type) bool {
	d, ok := r.load().byType[typ]
	return ok && d.Sensitive
}

// Len returns the number of definitions.
func (r *Registry) Len() int { return len(r.load().byType) }

// UnknownNameError reports a name that is neither a registered type nor an
// alias of one.
type UnknownNameError struct {
	// Name is the name looked up.
	Name string
	// Known are the registered types, sorted.
	Known []resource.Type
}

func (e *UnknownNameError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("definition: no resource type is named %q: no type is registered", e.Name)
	}
	return fmt.Sprintf("definition: no resource type is named %q (known types: %s)", e.Name, strings.Join(e.Known, ", "))
}
