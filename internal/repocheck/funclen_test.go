package repocheck_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// funclen runs internal/tools/funclen over dirs (relative to the
// repository's top) and returns what it lists: one function over 60
// lines a line.
func funclen(t *testing.T, dirs ...string) string {
	t.Helper()
	return string(goCmd(t, root(t), nil, append([]string{"run", "./internal/tools/funclen"}, dirs...)...))
}

// TestL1_NoFunctionInPkgIsOver60Lines: no function of pkg/'s production
// code (every module under pkg/, generated code included) has a body over
// 60 lines; internal/tools/funclen lists those that do.
func TestL1_NoFunctionInPkgIsOver60Lines(t *testing.T) {
	if out := funclen(t, "pkg"); out != "" {
		t.Errorf("functions of pkg/ over 60 lines (split them):\n%s", out)
	}
}

// TestL1_FunclenListsALongFunction: the check lists a function of 61
// lines and not one of 60, a test file's not at all.
func TestL1_FunclenListsALongFunction(t *testing.T) {
	dir := t.TempDir()
	body := func(name string, lines int) string {
		return "func " + name + "() {\n" + strings.Repeat("\t_ = 0\n", lines) + "}\n"
	}
	write := func(file, src string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte("package p\n\n"+src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("p.go", body("long", 61)+body("short", 60))
	write("p_test.go", body("longTest", 100))
	out := funclen(t, dir)
	if !strings.Contains(out, "  61 ") || !strings.Contains(out, " long\n") || strings.Contains(out, "short") || strings.Contains(out, "longTest") {
		t.Errorf("funclen over a 61-line function, a 60-line one and a test file's listed:\n%s", out)
	}
}
