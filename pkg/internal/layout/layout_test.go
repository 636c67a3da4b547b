// Package layout checks the import layering of the module's packages (issue
// 20, "parts where they belong"): what may import what, read from the
// production files (tests may import more).
package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/resgraph/resgraph"

// imports returns, per package directory of the module (relative to the
// module root, e.g. "pkg/state"), the import paths its non-test files
// import. Directories of other modules (their own go.mod) are included: a
// nested module's packages obey the same layering.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return err
			}
			if !slices.Contains(out[rel], p) {
				out[rel] = append(out[rel], p)
			}
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deps returns the module packages that dir imports, directly or not.
func deps(all map[string][]string, dir string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(d string) {
		for _, p := range all[d] {
			rel, ok := strings.CutPrefix(p, module+"/")
			if !ok || seen[rel] {
				continue
			}
			seen[rel] = true
			walk(rel)
		}
	}
	walk(dir)
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

func under(dir, parent string) bool { return dir == parent || strings.HasPrefix(dir, parent+"/") }

// TestModuleRootInternalIsNotImportedFromPkg: no package under pkg/ (state,
// resource and their implementations included) depends on the module
// root's internal/ packages, directly or not: what pkg/ shares lives under
// pkg/ (pkg/internal, pkg/state/internal, ...).
func TestModuleRootInternalIsNotImportedFromPkg(t *testing.T) {
	all := imports(t)
	checked := 0
	dirs := slices.Sorted(maps.Keys(all))
	for _, dir := range dirs {
		if !under(dir, "pkg") {
			continue
		}
		checked++
		for _, d := range deps(all, dir) {
			if under(d, "internal") {
				t.Errorf("%s depends on %s (module root internal/)", dir, d)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package under pkg/ was read")
	}
}

// TestLayering: the packages a contract package may not depend on.
func TestLayering(t *testing.T) {
	all := imports(t)
	for _, rule := range []struct{ pkg, notOn string }{
		{"pkg/resource", "pkg/state"},
		{"pkg/resource", "pkg/controller"},
		{"pkg/state", "pkg/controller"},
		{"pkg/state", "pkg/runtime"},
		{"pkg/controller", "pkg/runtime"},
		{"pkg/safe", "pkg/generic"}, // ResourceWithDefinition is typed's
		{"pkg/safe", "pkg/runtime"},
	} {
		if _, ok := all[rule.pkg]; !ok {
			t.Fatalf("package %s not found", rule.pkg)
		}
		for _, d := range deps(all, rule.pkg) {
			if under(d, rule.notOn) {
				t.Errorf("%s depends on %s", rule.pkg, d)
			}
		}
	}
}
