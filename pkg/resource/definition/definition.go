package definition

import (
	"fmt"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Definition describes a resource type (see the package documentation).
type Definition struct {
	// Type is the resource type.
	Type resource.Type
	// DefaultNamespace is the namespace its resources live in unless told
	// otherwise (may be empty).
	DefaultNamespace resource.Namespace
	// Aliases are other names of the type, matched ignoring case: a
	// plural, a singular, a short name ("links", "link").
	Aliases []string
	// Encoding is the encoding of its specs: "json", "protobuf", "own"
	// (the spec's own encoding), as the codec registry that encodes the
	// type sets it. Empty for a type no codec encodes.
	Encoding string
	// Columns are the columns a table of its resources prints, after the
	// metadata's.
	Columns []Column
	// Sensitive marks specs that hold secrets: never printed without an
	// explicit request, hidden by access control unless granted by name.
	Sensitive bool
}

// Column is a column of a table of resources: a name and a path into the
// spec's JSON form (see [ParsePath]).
type Column struct {
	// Name is the column's header.
	Name string
	// Path selects the value, such as ".mtu" or ".addresses[0]".
	Path string
}

// Provider is implemented by a typed resource's definition provider (the
// D of typed.Resource[S, D], called on its zero value) or by a resource
// registered by constructor, to describe its type beyond
// typed.Definition: aliases, columns, sensitivity. The Type and
// DefaultNamespace it returns may be left empty (they come from
// typed.Definition or the registration); when set they must match.
type Provider interface {
	ResourceDefinition() Definition
}

// Of returns the definition of typ that described (a value implementing
// [Provider], or anything else) gives, with defaultNS as its default
// namespace unless the provider sets one, and encoding as its encoding.
// It fails when the provider names another type or default namespace, or
// when the result is not valid (see [Definition.Validate]). A panic in
// the provider is an error.
func Of(typ resource.Type, defaultNS resource.Namespace, encoding string, described any) (d Definition, err error) {
	if p, ok := described.(Provider); ok {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("definition of %q: ResourceDefinition panicked: %v", typ, r)
			}
		}()
		d = p.ResourceDefinition().Clone()
	}
	switch {
	case d.Type != "" && d.Type != typ:
		return Definition{}, fmt.Errorf("definition of %q: ResourceDefinition names type %q", typ, d.Type)
	case d.DefaultNamespace != "" && defaultNS != "" && d.DefaultNamespace != defaultNS:
		return Definition{}, fmt.Errorf("definition of %q: ResourceDefinition names default namespace %q, typed.Definition %q", typ, d.DefaultNamespace, defaultNS)
	}
	d.Type = typ
	if d.DefaultNamespace == "" {
		d.DefaultNamespace = defaultNS
	}
	d.Encoding = encoding
	return d, d.Validate()
}

// Validate reports what is wrong with d: an empty type, an empty alias or
// one with spaces, an alias given twice, an unnamed or duplicate column, a
// column path that does not parse.
func (d Definition) Validate() error {
	if d.Type == "" {
		return fmt.Errorf("definition: empty resource type")
	}
	seen := map[string]bool{strings.ToLower(d.Type): true}
	for _, a := range d.Aliases {
		if a == "" || strings.ContainsFunc(a, isSpace) {
			return fmt.Errorf("definition of %q: alias %q is empty or has white space", d.Type, a)
		}
		if seen[strings.ToLower(a)] {
			return fmt.Errorf("definition of %q: alias %q given twice (names are matched ignoring case)", d.Type, a)
		}
		seen[strings.ToLower(a)] = true
	}
	cols := map[string]bool{}
	for _, c := range d.Columns {
		if c.Name == "" {
			return fmt.Errorf("definition of %q: a column without a name (path %q)", d.Type, c.Path)
		}
		if cols[c.Name] {
			return fmt.Errorf("definition of %q: column %q given twice", d.Type, c.Name)
		}
		cols[c.Name] = true
		if _, err := ParsePath(c.Path); err != nil {
			return fmt.Errorf("definition of %q: column %q: %w", d.Type, c.Name, err)
		}
	}
	return nil
}

// Names returns the names d answers to: its type, then its aliases.
func (d Definition) Names() []string {
	return append([]string{d.Type}, d.Aliases...)
}

// Clone returns a copy of d that shares no slice with it.
func (d Definition) Clone() Definition {
	d.Aliases = slices.Clone(d.Aliases)
	d.Columns = slices.Clone(d.Columns)
	return d
}

// Equal reports whether d and o describe the type alike.
func (d Definition) Equal(o Definition) bool {
	return d.Type == o.Type && d.DefaultNamespace == o.DefaultNamespace && d.Encoding == o.Encoding &&
		d.Sensitive == o.Sensitive && slices.Equal(d.Aliases, o.Aliases) && slices.Equal(d.Columns, o.Columns)
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}
