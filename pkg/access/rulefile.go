package access

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/pkg/internal/opt"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// LoadFile reads a rule file (see [ReadRules]) and makes its policy with
// [NewPolicy] and opts.
func LoadFile(path string, defs *definition.Registry, opts ...PolicyOption) (*Policy, error) {
	var o policyOptions
	opt.Apply(&o, opts)
	rules, err := ReadRules(path, defs, o.pages...)
	if err != nil {
		return nil, err
	}
	return NewPolicy(defs, rules, opts...)
}

// ReadRules reads the roles and bindings of a rule file: YAML, as the
// package documentation shows. A file that does not parse, or names an
// unknown key, verb, type (neither a type of defs nor an alias of one),
// page (beyond [BuiltinPages] and pages), user or group, is refused with
// every problem found, each as "file:line: problem" (rule A5). Types are
// returned as given; [NewPolicy] resolves aliases.
func ReadRules(path string, defs *definition.Registry, pages ...Page) (Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Rules{}, err
	}
	return ParseRules(path, data, defs, pages...)
}

// ParseRules is [ReadRules] of a file's contents; path names it in
// errors.
func ParseRules(path string, data []byte, defs *definition.Registry, pages ...Page) (Rules, error) {
	if defs == nil {
		defs = definition.NewRegistry()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Rules{}, fmt.Errorf("%s:%w", path, yamlError(err))
	}
	fp := &fileParser{path: path, resolve: typeResolver(defs), pages: append(slices.Clone(BuiltinPages), pages...)}
	rules := fp.file(&doc)
	if err := errors.Join(fp.errs...); err != nil {
		return Rules{}, err
	}
	return rules, nil
}

// fileParser walks a rule file's YAML nodes, collecting problems with
// their lines.
type fileParser struct {
	path    string
	resolve func(string) (string, error)
	pages   []Page
	errs    []error
}

func (fp *fileParser) errorf(n *yaml.Node, format string, args ...any) {
	fp.errs = append(fp.errs, fmt.Errorf("%s:%d: %s", fp.path, n.Line, fmt.Sprintf(format, args...)))
}

func (fp *fileParser) pos(n *yaml.Node) string { return fmt.Sprintf("%s:%d: ", fp.path, n.Line) }

func (fp *fileParser) file(doc *yaml.Node) Rules {
	var rules Rules
	if doc.Kind == 0 || len(doc.Content) == 0 {
		fp.errs = append(fp.errs, fmt.Errorf("%s:1: the file is empty: want roles and bindings", fp.path))
		return rules
	}
	top := fp.mapping(doc.Content[0], "roles", "bindings")
	for _, n := range fp.sequence(top["roles"]) {
		rules.Roles = append(rules.Roles, fp.role(n))
	}
	for _, n := range fp.sequence(top["bindings"]) {
		rules.Bindings = append(rules.Bindings, fp.binding(n))
	}
	return rules
}

func (fp *fileParser) role(n *yaml.Node) Role {
	m := fp.mapping(n, "name", "grants", "pages")
	r := Role{Name: fp.scalar(m["name"], n, "name"), pos: fp.pos(n)}
	for _, g := range fp.sequence(m["grants"]) {
		r.Grants = append(r.Grants, fp.grant(g))
	}
	for _, p := range fp.strings(m["pages"]) {
		if pg := Page(p.Value); pg == "*" || slices.Contains(fp.pages, pg) {
			r.Pages = append(r.Pages, pg)
		} else {
			fp.errorf(p, "unknown page %q (known: %v, or \"*\")", p.Value, fp.pages)
		}
	}
	return r
}

func (fp *fileParser) grant(n *yaml.Node) Grant {
	m := fp.mapping(n, "verbs", "namespaces", "types")
	var g Grant
	for _, v := range fp.strings(m["verbs"]) {
		if v.Value == "*" {
			g.Verbs = append(g.Verbs, Verbs...)
			continue
		}
		verb, err := ParseVerb(v.Value)
		if err != nil {
			fp.errorf(v, "%v", err)
			continue
		}
		g.Verbs = append(g.Verbs, verb)
	}
	for _, ns := range fp.strings(m["namespaces"]) {
		var p pattern
		if err := p.add(ns.Value, sameName); err != nil {
			fp.errorf(ns, "namespace: %v", err)
		}
		g.Namespaces = append(g.Namespaces, ns.Value)
	}
	for _, t := range fp.strings(m["types"]) {
		var p pattern
		if err := p.add(t.Value, fp.resolve); err != nil {
			fp.errorf(t, "%v", err)
		}
		g.Types = append(g.Types, t.Value)
	}
	for _, key := range []string{"verbs", "namespaces", "types"} {
		if m[key] == nil {
			fp.errorf(n, "a grant without %s", key)
		}
	}
	return g
}

func (fp *fileParser) binding(n *yaml.Node) Binding {
	m := fp.mapping(n, "role", "to")
	b := Binding{Role: fp.scalar(m["role"], n, "role"), pos: fp.pos(n)}
	for _, t := range fp.sequence(m["to"]) {
		if match, ok := fp.match(t); ok {
			b.To = append(b.To, match)
		}
	}
	return b
}

// yamlError drops the "yaml: " prefix of a parse error, whose message
// starts with "line N:".
func yamlError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		return errors.New(te.Errors[0])
	}
	msg := err.Error()
	const prefix = "yaml: "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	if len(msg) > 5 && msg[:5] == "line " {
		return errors.New(msg[5:])
	}
	return errors.New("1: " + msg)
}
