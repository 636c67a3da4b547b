package repocheck_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// pkgDecls is what one package declares.
type pkgDecls struct {
	dir     string
	decls   map[string]bool            // exported top-level names
	members map[string]map[string]bool // by type name: its methods and fields
	embeds  map[string][]string        // by type name: its embedded types (local names, or "" for another package's)
}

func newPkgDecls(dir string) *pkgDecls {
	return &pkgDecls{dir: dir, decls: map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}}
}

// hasMember reports whether type typ of p has the method or field m, its
// embedded types' included (one of another package is taken to have it).
func (p *pkgDecls) hasMember(typ, m string, seen map[string]bool) bool {
	if p.members[typ][m] {
		return true
	}
	if seen[typ] {
		return false
	}
	seen[typ] = true
	for _, e := range p.embeds[typ] {
		if e == "" || p.hasMember(e, m, seen) {
			return true
		}
	}
	return false
}

// codeIndex is what the repository declares, and the standard library on
// demand.
type codeIndex struct {
	root    string
	pkgs    map[string][]*pkgDecls // by package name
	types   map[string][]*pkgDecls // by exported type name: the packages that declare it
	names   map[string]bool        // every declared name: top-level, methods, fields
	tests   map[string]bool        // Test, Benchmark, Fuzz and Example functions
	targets map[string]bool        // the Makefile's targets
	text    []byte                 // every Go file, script and Makefile of the repository

	stdMu   sync.Mutex
	stdDirs map[string][]string // standard library package directories by name
	std     map[string][]*pkgDecls
}

var (
	indexOnce sync.Once
	index     *codeIndex
	indexErr  error
)

// repoIndex parses the repository once for every test.
func repoIndex(t *testing.T) *codeIndex {
	t.Helper()
	indexOnce.Do(func() { index, indexErr = buildIndex(root(t)) })
	if indexErr != nil {
		t.Fatal(indexErr)
	}
	return index
}

func buildIndex(top string) (*codeIndex, error) {
	ix := &codeIndex{root: top, pkgs: map[string][]*pkgDecls{}, types: map[string][]*pkgDecls{},
		names: map[string]bool{}, tests: map[string]bool{}, targets: map[string]bool{}, std: map[string][]*pkgDecls{}}
	byDir := map[string]*pkgDecls{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != top && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if name == "Makefile" || strings.HasSuffix(name, ".sh") || !strings.Contains(name, ".") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			ix.text = append(ix.text, b...)
			if name == "Makefile" && filepath.Dir(path) == top {
				for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllSubmatch(b, -1) {
					ix.targets[string(m[1])] = true
				}
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		ix.text = append(ix.text, b...)
		if strings.HasSuffix(name, "_test.go") {
			ix.addTests(f)
			return nil
		}
		dir := filepath.Dir(path)
		p := byDir[dir]
		if p == nil {
			p = newPkgDecls(dir)
			byDir[dir] = p
			ix.pkgs[f.Name.Name] = append(ix.pkgs[f.Name.Name], p)
		}
		ix.addDecls(p, f)
		return nil
	})
	return ix, err
}

func (ix *codeIndex) addTests(f *ast.File) {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
			ix.tests[fn.Name.Name] = true
		}
		// A test file's types and methods are names the docs may use too
		// (conformance suites' methods are tests).
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
			ix.tests[fn.Name.Name] = true
			ix.names[fn.Name.Name] = true
		}
	}
}

// addDecls records the declarations of a non-test file.
func (ix *codeIndex) addDecls(p *pkgDecls, f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			ix.names[d.Name.Name] = true
			if d.Recv == nil {
				p.decls[d.Name.Name] = true
				continue
			}
			if typ := recvType(d.Recv.List[0].Type); typ != "" {
				p.member(typ, d.Name.Name)
			}
			if strings.HasPrefix(d.Name.Name, "Test") && ix.tests != nil {
				ix.tests[d.Name.Name] = true // a suite's test (conformance)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ix.addSpec(p, s)
			}
		}
	}
}

func (ix *codeIndex) addSpec(p *pkgDecls, s ast.Spec) {
	switch s := s.(type) {
	case *ast.ValueSpec:
		for _, n := range s.Names {
			p.decls[n.Name] = true
			ix.names[n.Name] = true
		}
	case *ast.TypeSpec:
		name := s.Name.Name
		p.decls[name] = true
		ix.names[name] = true
		if ast.IsExported(name) {
			ix.types[name] = append(ix.types[name], p)
		}
		if p.members[name] == nil {
			p.members[name] = map[string]bool{}
		}
		var fields *ast.FieldList
		switch ty := s.Type.(type) {
		case *ast.StructType:
			fields = ty.Fields
		case *ast.InterfaceType:
			fields = ty.Methods
		}
		if fields == nil {
			return
		}
		for _, fl := range fields.List {
			if len(fl.Names) == 0 { // embedded
				local, emb := embeddedName(fl.Type)
				p.member(name, emb)
				ix.names[emb] = true
				if !local {
					emb = ""
				}
				p.embeds[name] = append(p.embeds[name], emb)
				continue
			}
			for _, n := range fl.Names {
				p.member(name, n.Name)
				ix.names[n.Name] = true
			}
		}
	}
}

func (p *pkgDecls) member(typ, m string) {
	if p.members[typ] == nil {
		p.members[typ] = map[string]bool{}
	}
	p.members[typ][m] = true
}

// recvType is the name of a receiver's type.
func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.IndexListExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// embeddedName is the name of an embedded type, and whether it is of the
// same package.
func embeddedName(e ast.Expr) (local bool, name string) {
	switch e := e.(type) {
	case *ast.StarExpr:
		return embeddedName(e.X)
	case *ast.IndexExpr:
		return embeddedName(e.X)
	case *ast.IndexListExpr:
		return embeddedName(e.X)
	case *ast.Ident:
		return true, e.Name
	case *ast.SelectorExpr:
		return false, e.Sel.Name
	}
	return false, ""
}

// stdPackages returns the standard library's packages named name, parsed
// on first use.
func (ix *codeIndex) stdPackages(name string) []*pkgDecls {
	ix.stdMu.Lock()
	defer ix.stdMu.Unlock()
	if ps, ok := ix.std[name]; ok {
		return ps
	}
	if ix.stdDirs == nil {
		ix.stdDirs = map[string][]string{}
		src := filepath.Join(goroot(), "src")
		_ = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if n := d.Name(); n == "internal" || n == "vendor" || n == "testdata" || n == "cmd" {
				return filepath.SkipDir
			}
			ix.stdDirs[d.Name()] = append(ix.stdDirs[d.Name()], path)
			return nil
		})
	}
	var ps []*pkgDecls
	// The standard library's names are not the repository's: they are
	// recorded apart.
	scratch := &codeIndex{names: map[string]bool{}, types: map[string][]*pkgDecls{}}
	for _, dir := range ix.stdDirs[name] {
		p := newPkgDecls(dir)
		fset := token.NewFileSet()
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil || f.Name.Name != name {
				continue
			}
			scratch.addDecls(p, f)
		}
		ps = append(ps, p)
	}
	ix.std[name] = ps
	return ps
}

// goroot is the GOROOT of the go command the tests run with.
func goroot() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
