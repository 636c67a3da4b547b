package repocheck_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// repoPath is the module path of the root module; every module of the
// repository has it as a prefix.
const repoPath = "github.com/resgraph/resgraph"

// root is the repository's top directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// goCmd runs the go command in dir with env added and returns its
// standard output; a failure fails the test with its standard error.
func goCmd(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	out, err := goCmdErr(t, dir, env, args...)
	if err != nil {
		t.Fatalf("go %s in %s: %v", strings.Join(args, " "), dir, err)
	}
	return out
}

func goCmdErr(t *testing.T, dir string, env []string, args ...string) ([]byte, error) {
	t.Helper()
	return runIn(t, dir, env, "go", args...)
}

// runIn runs a program in dir with env added and returns its standard
// output; an error carries its standard error.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &cmdError{err: err, stderr: stderr.String()}
	}
	return out, nil
}

type cmdError struct {
	err    error
	stderr string
}

func (e *cmdError) Error() string { return e.err.Error() + ":\n" + e.stderr }

// workspaceDirs returns the directories go.work uses, relative to the
// root and cleaned ("." for the root module).
func workspaceDirs(t *testing.T) []string {
	t.Helper()
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(goCmd(t, root(t), nil, "work", "edit", "-json", filepath.Join(root(t), "go.work")), &work); err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(work.Use))
	for _, u := range work.Use {
		dirs = append(dirs, filepath.Clean(u.DiskPath))
	}
	slices.Sort(dirs)
	return dirs
}

// goModDirs returns the directory of every go.mod of the repository
// outside the directories the go tool ignores (testdata, and names
// starting with "." or "_"), relative to the root.
func goModDirs(t *testing.T) []string {
	t.Helper()
	top := root(t)
	var dirs []string
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != top && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "go.mod" {
			rel, err := filepath.Rel(top, filepath.Dir(path))
			if err != nil {
				return err
			}
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(dirs)
	return dirs
}

// TestM1_WorkspaceListsEveryModule: go.work uses exactly the repository's
// modules.
func TestM1_WorkspaceListsEveryModule(t *testing.T) {
	used := workspaceDirs(t)
	for _, dir := range goModDirs(t) {
		if !slices.Contains(used, dir) {
			t.Errorf("%s/go.mod is not in go.work: add it (go work use ./%s)", dir, dir)
		}
	}
	for _, dir := range used {
		if _, err := os.Stat(filepath.Join(root(t), dir, "go.mod")); err != nil {
			t.Errorf("go.work uses %s, which has no go.mod", dir)
		}
	}
}

// module is what the tests need of a module's go.mod.
type module struct {
	Module  struct{ Path string }
	Require []struct{ Path string }
}

func readModule(t *testing.T, dir string) module {
	t.Helper()
	var m module
	if err := json.Unmarshal(goCmd(t, dir, nil, "mod", "edit", "-json"), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// pkg is what the tests need of a package of a module.
type pkg struct {
	ImportPath string
	Name       string
	Module     *struct{ Path, Dir string }
}

// listPackages lists the packages matched by ./... in dir and, with deps,
// every package they import (tests excluded), in module mode alone.
func listPackages(t *testing.T, dir string, deps bool) []pkg {
	t.Helper()
	args := []string{"list", "-e", "-json=ImportPath,Name,Module"}
	if deps {
		args = append(args, "-deps")
	}
	out := goCmd(t, dir, []string{"GOWORK=off"}, append(args, "./...")...)
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// importable returns the packages of a module that another module can
// import: neither commands nor internal packages.
func importable(pkgs []pkg) []string {
	var out []string
	for _, p := range pkgs {
		if p.Name != "main" && !isInternal(p.ImportPath) {
			out = append(out, p.ImportPath)
		}
	}
	return out
}

func isInternal(path string) bool {
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}

// libraries returns the modules of the repository that have packages
// another module can import, with those packages.
func libraries(t *testing.T) map[string][]string {
	t.Helper()
	libs := map[string][]string{}
	for _, dir := range workspaceDirs(t) {
		if pkgs := importable(listPackages(t, filepath.Join(root(t), dir), false)); len(pkgs) > 0 {
			libs[dir] = pkgs
		}
	}
	return libs
}

// TestM2_NoTestOnlyRequirementOnARepositoryModule: every requirement of a
// library module on another module of the repository is used by its
// non-test packages.
func TestM2_NoTestOnlyRequirementOnARepositoryModule(t *testing.T) {
	for _, dir := range slices.Sorted(maps.Keys(libraries(t))) {
		abs := filepath.Join(root(t), dir)
		m := readModule(t, abs)
		used := map[string]bool{}
		for _, p := range listPackages(t, abs, true) {
			if p.Module != nil {
				used[p.Module.Path] = true
			}
		}
		for _, r := range m.Require {
			if strings.HasPrefix(r.Path, repoPath) && !used[r.Path] {
				t.Errorf("%s (%s) requires %s, which only its tests import: its users would need a replace for it; "+
					"move those tests to a test module of their own (see package doc)", dir, m.Module.Path, r.Path)
			}
		}
	}
}

// importedRepoModules returns the modules of this repository that the
// non-test packages of the module in dir import (itself included), with
// their directories.
func importedRepoModules(t *testing.T, dir string) map[string]string {
	t.Helper()
	mods := map[string]string{}
	for _, p := range listPackages(t, dir, true) {
		if p.Module != nil && strings.HasPrefix(p.Module.Path, repoPath) {
			mods[p.Module.Path] = p.Module.Dir
		}
	}
	return mods
}

// TestM3_AUserNeedsNoReplaceForATestOnlyModule: for each library module, a
// user module that imports all its importable packages, with replace
// directives only for the modules of this repository that those packages
// import (none is published yet), resolves its build: go mod tidy and go
// list -m all.
func TestM3_AUserNeedsNoReplaceForATestOnlyModule(t *testing.T) {
	top := root(t)
	libs := libraries(t)
	for _, dir := range slices.Sorted(maps.Keys(libs)) {
		pkgs := libs[dir]
		t.Run(strings.ReplaceAll(dir, "/", "_"), func(t *testing.T) {
			abs := filepath.Join(top, dir)
			path := readModule(t, abs).Module.Path
			user := t.TempDir()
			var gomod, main strings.Builder
			gomod.WriteString("module example.com/user\n\ngo 1.26.2\n\n")
			for mod, modDir := range importedRepoModules(t, abs) {
				gomod.WriteString("replace " + mod + " => " + modDir + "\n")
			}
			main.WriteString("package main\n\nimport (\n")
			for _, p := range pkgs {
				main.WriteString("\t_ \"" + p + "\"\n")
			}
			main.WriteString(")\n\nfunc main() {}\n")
			// The module's own checksums: the user resolves the same versions.
			sums, err := os.ReadFile(filepath.Join(abs, "go.sum"))
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string]string{"go.mod": gomod.String(), "main.go": main.String(), "go.sum": string(sums)} {
				if err := os.WriteFile(filepath.Join(user, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
			if _, err := goCmdErr(t, user, env, "get", path+"@v0.0.0-00010101000000-000000000000"); err != nil {
				t.Fatalf("a user of %s cannot require it with replaces for it and the root module only: %v", path, err)
			}
			// tidy resolves the packages built; list -m all (as gopls and
			// dependency tools run it) the whole module graph.
			for _, args := range [][]string{{"mod", "tidy"}, {"list", "-m", "all"}} {
				if _, err := goCmdErr(t, user, env, args...); err != nil {
					t.Fatalf("a user of %s with replaces for it and the root module only: go %s: %v", path, strings.Join(args, " "), err)
				}
			}
		})
	}
}

// harnessEtcdReplaces are the modules of this repository for which the
// shared side-by-side harness (../shared/bench/compare) writes a replace
// directive when it builds its runner of the etcd state.
var harnessEtcdReplaces = []string{
	repoPath,
	repoPath + "/pkg/state/etcd",
	repoPath + "/pkg/resource/codec/protobuf",
}

// TestM4_TheEtcdStateImportsNoModuleTheHarnessDoesNotReplace: the non-test
// packages of pkg/state/etcd import only modules of this repository that
// the shared harness replaces; any other would be fetched from the module
// proxy, which does not serve them, and E1 and E3 could not be measured.
func TestM4_TheEtcdStateImportsNoModuleTheHarnessDoesNotReplace(t *testing.T) {
	for mod := range importedRepoModules(t, filepath.Join(root(t), "pkg", "state", "etcd")) {
		if !slices.Contains(harnessEtcdReplaces, mod) {
			t.Errorf("pkg/state/etcd imports module %s, which the side-by-side harness does not replace: "+
				"its etcd runner would not build (keep that package in the root module)", mod)
		}
	}
}
