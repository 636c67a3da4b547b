package repocheck_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// publicDocs returns the doc comments go doc shows of the package in dir
// (its package doc and those of its exported names, struct fields and
// interface methods included), or "" when dir holds no package.
func publicDocs(t *testing.T, dir string) string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return ""
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder // every doc on paragraphs of its own
	write := func(doc string) { b.WriteString(doc + "\n\n") }
	write(p.Doc)
	decl := func(d ast.Decl) {
		ast.Inspect(d, func(n ast.Node) bool {
			if c, ok := n.(*ast.CommentGroup); ok { // fields' too
				write(c.Text())
			}
			return true
		})
	}
	for _, v := range append(p.Consts, p.Vars...) {
		write(v.Doc)
	}
	for _, f := range p.Funcs {
		write(f.Doc)
	}
	for _, ty := range p.Types {
		write(ty.Doc)
		decl(ty.Decl)
		for _, v := range append(ty.Consts, ty.Vars...) {
			write(v.Doc)
		}
		for _, f := range append(ty.Funcs, ty.Methods...) {
			write(f.Doc)
		}
	}
	return b.String()
}

// publicPackageDirs lists the directories of the public packages under
// the repository's top: pkg/, conformance/ and exporters/, internal
// packages, testdata and the commands left out.
func publicPackageDirs(t *testing.T) []string {
	t.Helper()
	top := root(t)
	var dirs []string
	for _, start := range []string{"pkg", "conformance", "exporters"} {
		err := filepath.WalkDir(filepath.Join(top, start), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			switch d.Name() {
			case "internal", "testdata":
				return filepath.SkipDir
			}
			rel, err := filepath.Rel(top, path)
			dirs = append(dirs, rel)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

var (
	engineWord = regexp.MustCompile(`(?i)\bengines?\b`)
	// engineNames are the uses of "Engine" the glossary allows: the
	// contract's interface of a Runtime and what returns one.
	engineNames = regexp.MustCompile(`\b(controller\.Engine|NewEngine(Over)?|Engine)\b`)
	stepWord    = regexp.MustCompile(`(?i)\bsteps?\b`)
	simWord     = regexp.MustCompile(`(?i)\bsim\b|simulat`)
)

// TestV1_GoDocSpeaksTheGlossary: the doc comments go doc shows of every
// public package use docs/glossary.md's words: "engine" only as the name
// controller.Engine (the Runtime is "the Runtime"), "step" only for the
// simulator's: in its package, or in a paragraph that names it (package
// sim, a simulated run).
func TestV1_GoDocSpeaksTheGlossary(t *testing.T) {
	top := root(t)
	for _, dir := range publicPackageDirs(t) {
		inSim := filepath.ToSlash(dir) == "pkg/runtime/runtimetest/sim"
		for para := range strings.SplitSeq(publicDocs(t, filepath.Join(top, dir)), "\n\n") {
			for l := range strings.Lines(para) {
				if engineWord.MatchString(engineNames.ReplaceAllString(l, "")) {
					t.Errorf("%s: %q: the Runtime, not the engine (docs/glossary.md)", dir, strings.TrimSpace(l))
				}
			}
			if stepWord.MatchString(para) && !inSim && !simWord.MatchString(para) {
				t.Errorf("%s: %q: a step is the simulator's only (docs/glossary.md)", dir, strings.TrimSpace(para))
			}
		}
	}
}
