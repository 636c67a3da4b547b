// Command funclen lists the functions of the non-test Go files under its
// arguments whose body is longer than -max lines (default 60), longest
// first; "(reason given)" marks those whose doc comment says why, in a
// paragraph starting "Length:". The team's rule: no production function
// over about 60 lines without a reason written above it.
//
//	go run ./internal/tools/funclen pkg
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// long is a function over the limit.
type long struct {
	lines int
	where string
	name  string
	why   bool
}

func main() {
	limit := flag.Int("max", 60, "longest body, in lines, that is not listed")
	flag.Parse()
	var found []long
	for _, root := range flag.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			more, err := scan(path, *limit)
			found = append(found, more...)
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	slices.SortStableFunc(found, func(a, b long) int { return cmp.Compare(b.lines, a.lines) })
	for _, f := range found {
		reason := ""
		if f.why {
			reason = " (reason given)"
		}
		fmt.Printf("%4d %s %s%s\n", f.lines, f.where, f.name, reason)
	}
}

// scan returns the functions of the file path longer than limit lines.
func scan(path string, limit int) ([]long, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var found []long
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		n := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Body.Lbrace).Line - 1
		if n <= limit {
			continue
		}
		found = append(found, long{
			lines: n,
			where: fmt.Sprintf("%s:%d", path, fset.Position(fd.Pos()).Line),
			name:  funcName(fd),
			why:   fd.Doc != nil && strings.Contains(fd.Doc.Text(), "Length:"),
		})
	}
	return found, nil
}

// funcName is "Recv.Name" for a method, "Name" for a function.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
