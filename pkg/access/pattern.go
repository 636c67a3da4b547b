package access

import (
	"fmt"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// pattern matches names: any name, names in a list, or names with a
// prefix or a suffix. Matching allocates nothing.
type pattern struct {
	any      bool
	exact    []string
	prefixes []string
	suffixes []string
}

// match reports whether the pattern matches name; byName restricts it to
// the names listed exactly (a sensitive type).
func (p *pattern) match(name string, byName bool) bool {
	if slices.Contains(p.exact, name) {
		return true
	}
	if byName {
		return false
	}
	if p.any {
		return true
	}
	for _, s := range p.prefixes {
		if strings.HasPrefix(name, s) {
			return true
		}
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// add adds one name or wildcard to the pattern; resolve maps a name to the
// one it stands for (a type's alias to the type).
func (p *pattern) add(name string, resolve func(string) (string, error)) error {
	switch n := strings.Count(name, "*"); {
	case name == "":
		return fmt.Errorf("an empty name")
	case name == "*":
		p.any = true
	case n == 1 && strings.HasSuffix(name, "*"):
		p.prefixes = append(p.prefixes, strings.TrimSuffix(name, "*"))
	case n == 1 && strings.HasPrefix(name, "*"):
		p.suffixes = append(p.suffixes, strings.TrimPrefix(name, "*"))
	case n > 0:
		return fmt.Errorf("%q: a wildcard is \"*\", or one \"*\" at the start or the end of a name", name)
	default:
		resolved, err := resolve(name)
		if err != nil {
			return err
		}
		p.exact = append(p.exact, resolved)
	}
	return nil
}

// sameName resolves a namespace: namespaces are not registered.
func sameName(name string) (string, error) { return name, nil }

// typeResolver resolves a type or an alias with the definitions.
func typeResolver(defs *definition.Registry) func(string) (string, error) {
	return func(name string) (string, error) {
		d, err := defs.Resolve(name)
		if err != nil {
			return "", fmt.Errorf("unknown type %q (neither a registered type nor an alias of one)", name)
		}
		return d.Type, nil
	}
}
