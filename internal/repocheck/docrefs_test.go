package repocheck_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The code the docs name (rule D1): every code span of README.md,
// bench/README.md and docs/*.md, and every package-qualified name in
// their Go code blocks, that names code of this repository resolves —
// package-qualified names and their members, Type.Member names, options,
// tests, benchmarks, fuzz targets and examples, make targets, environment
// variables, file paths and links.

// quote is a piece of a document that names code, with where it is.
type quote struct {
	file    string // relative to the root
	line    int
	text    string
	code    bool // from a fenced code block (only qualified names are checked)
	foreign bool // the document names the established runtime's code: no Go names checked
}

// docFiles are the documents whose quotes are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "bench/README.md"}
	more, err := filepath.Glob(filepath.Join(root(t), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		rel, _ := filepath.Rel(root(t), f)
		files = append(files, rel)
	}
	return files
}

var (
	spanRE = regexp.MustCompile("`([^`]+)`")
	linkRE = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	// a name the code had: "(was `X`)", "(were `X`, `Y`)".
	wasRE = regexp.MustCompile(`\((?:was|were|formerly) [^)]*\)`)
)

// foreignDocs name the established runtime's code throughout.
var foreignDocs = []string{"bench/README.md"}

// proseOf is what of a document's line is checked: names the code had
// ("(was `X`)") and the first cell of a table of the established
// runtime's names (a header starting "| Established runtime") left out.
func proseOf(line string, establishedTable bool) string {
	line = wasRE.ReplaceAllString(line, "")
	if establishedTable && strings.HasPrefix(strings.TrimSpace(line), "|") {
		cells := strings.SplitN(strings.TrimSpace(line), "|", 3)
		if len(cells) == 3 {
			line = cells[2]
		}
	}
	return line
}

// quotes returns the code spans, link targets and code lines of a
// document.
func quotes(t *testing.T, rel string) []quote {
	t.Helper()
	f, err := os.Open(filepath.Join(root(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out         []quote
		fence       string // the language of the fenced block we are in
		inside      bool
		established bool // in a table of the established runtime's names
		foreign     = slices.Contains(foreignDocs, rel)
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "```") {
			inside = !inside
			fence = strings.TrimPrefix(trimmed, "```")
			continue
		}
		if inside {
			if fence == "go" {
				out = append(out, quote{file: rel, line: n, text: line, code: true, foreign: foreign})
			}
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "| Established runtime"):
			established = true
		case !strings.HasPrefix(trimmed, "|"):
			established = false
		}
		prose := proseOf(line, established)
		for _, m := range spanRE.FindAllStringSubmatch(prose, -1) {
			out = append(out, quote{file: rel, line: n, text: m[1], foreign: foreign})
		}
		for _, m := range linkRE.FindAllStringSubmatch(spanRE.ReplaceAllString(prose, ""), -1) {
			if !strings.Contains(m[1], "://") {
				out = append(out, quote{file: rel, line: n, text: "link:" + m[1]})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	// a package-qualified name and up to two members: state.State,
	// observe.ControllerStatus.Leadership (not preceded by a name or dot:
	// x.state.Foo is a field chain).
	qualifiedRE = regexp.MustCompile(`(?:^|[^\w.])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?(\*)?`)
	// a type-qualified member: Runtime.Relist, Term.Number.
	typeMemberRE = regexp.MustCompile(`(?:^|[^\w.])([A-Z]\w*)\.([A-Z]\w*)`)
	// a test, benchmark, fuzz target or example, "…" or "..." after a
	// prefix of its name.
	testRE   = regexp.MustCompile(`\b((?:Test|Benchmark|Fuzz|Example)[A-Z0-9_]\w*)(…|\.\.\.|\*)?`)
	makeRE   = regexp.MustCompile(`(?:^|\s)make ([a-z][a-z0-9-]*)`)
	envRE    = regexp.MustCompile(`\bRESGRAPH_[A-Z0-9_]*[A-Z0-9]`)
	pathRE   = regexp.MustCompile(`(?:^|[\s(=])(\.?/?[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)+/?)`)
	modRE    = regexp.MustCompile(`github\.com/resgraph/resgraph((?:/[A-Za-z0-9_.-]+)*)`)
	optionRE = regexp.MustCompile(`^With[A-Z]\w*$`)
	callRE   = regexp.MustCompile(`\([^()]*\)`)
	typArgRE = regexp.MustCompile(`\[[^\[\]]*\]`)
)

// problems returns what q names that does not exist.
func (ix *codeIndex) problems(q quote) []string {
	text := q.text
	if link, ok := strings.CutPrefix(text, "link:"); ok {
		return ix.checkPath(filepath.Join(filepath.Dir(q.file), link), link)
	}
	// Calls and type arguments drop out: Observe().Explain, StateGet[*Label].
	for prev := ""; prev != text; {
		prev, text = text, typArgRE.ReplaceAllString(callRE.ReplaceAllString(text, ""), "")
	}
	var out []string
	if !q.foreign {
		out = append(out, ix.checkQualified(text, q.code)...)
	}
	if q.code {
		return out
	}
	if !q.foreign {
		out = append(out, ix.checkTypeMembers(text)...)
	}
	for _, m := range testRE.FindAllStringSubmatch(text, -1) {
		if !ix.hasTest(m[1], m[2] != "") {
			out = append(out, "no test, benchmark, fuzz target or example "+m[1]+m[2])
		}
	}
	for _, m := range makeRE.FindAllStringSubmatch(text, -1) {
		if !ix.targets[m[1]] {
			out = append(out, "no Makefile target "+m[1])
		}
	}
	for _, env := range envRE.FindAllString(text, -1) {
		if !strings.Contains(string(ix.text), env) {
			out = append(out, "no code reads "+env)
		}
	}
	out = append(out, ix.checkPaths(text)...)
	if optionRE.MatchString(text) && !q.foreign && !ix.names[text] {
		out = append(out, "no option "+text+" in the repository")
	}
	return out
}

func (ix *codeIndex) hasTest(name string, prefix bool) bool {
	if !prefix {
		return ix.tests[name]
	}
	for n := range ix.tests {
		if strings.HasPrefix(n, name) {
			return true
		}
	}
	return false
}

// checkQualified checks the package-qualified names of text whose package
// is one of the repository's or of the standard library.
func (ix *codeIndex) checkQualified(text string, code bool) []string {
	var out []string
	for _, m := range qualifiedRE.FindAllStringSubmatch(text, -1) {
		pkg, name, member := m[1], m[2], m[3]
		if m[4] != "" {
			continue // a pattern: state.Is*
		}
		repo, std := ix.pkgs[pkg], ix.stdPackages(pkg)
		if len(repo)+len(std) == 0 || (code && len(repo) == 0) {
			continue // another module's package (zap, grpc, ...), or a variable in a code block
		}
		if testRE.MatchString(name) && member == "" {
			if !ix.tests[name] {
				out = append(out, "no test, benchmark, fuzz target or example "+pkg+"."+name)
			}
			continue // a package's benchmark: atrest.BenchmarkSeal
		}
		if !resolves(repo, name, member) && !resolves(std, name, member) {
			if code && slices.Contains(shadowed, pkg) {
				continue
			}
			what := pkg + "." + name
			if member != "" {
				what += "." + member
			}
			out = append(out, "no "+what+" in any package named "+pkg)
		}
	}
	return out
}

// shadowed are names of packages of the repository that code blocks also
// use for another module's package of the same name (imported as such,
// the repository's under another name).
var shadowed = []string{"prometheus"}

func resolves(ps []*pkgDecls, name, member string) bool {
	for _, p := range ps {
		if p.decls[name] && (member == "" || p.hasMember(name, member, map[string]bool{})) {
			return true
		}
	}
	return false
}

// checkTypeMembers checks Type.Member names whose type the repository
// declares; a member of a type it does not declare is reported when the
// type is not the standard library's either.
func (ix *codeIndex) checkTypeMembers(text string) []string {
	var out []string
	for _, m := range typeMemberRE.FindAllStringSubmatch(text, -1) {
		typ, member := m[1], m[2]
		ps := ix.types[typ]
		if len(ps) == 0 || len(typ) == 1 {
			continue // not a type of the repository, or a type parameter
		}
		ok := false
		for _, p := range ps {
			ok = ok || p.hasMember(typ, member, map[string]bool{})
		}
		if !ok {
			out = append(out, "no method or field "+member+" of "+typ)
		}
	}
	return out
}

// checkPaths checks the repository paths text names: a path whose first
// element is an entry of the root must exist (a trailing /... and a
// :line dropped), and so must a package path of the module.
func (ix *codeIndex) checkPaths(text string) []string {
	var out []string
	for _, m := range modRE.FindAllStringSubmatch(text, -1) {
		if rel := strings.TrimPrefix(m[1], "/"); rel != "" && rel != "..." {
			out = append(out, ix.checkPath(rel, m[0])...)
		}
	}
	for _, m := range pathRE.FindAllStringSubmatch(text, -1) {
		p := strings.TrimPrefix(strings.TrimSuffix(m[1], "/..."), "./")
		if strings.Contains(p, "github.com/") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "..") {
			continue
		}
		first := strings.SplitN(p, "/", 2)[0]
		if _, err := os.Stat(filepath.Join(ix.root, first)); err != nil {
			continue // not a path of the repository (a URL path, a type, a placeholder)
		}
		out = append(out, ix.checkPath(p, m[1])...)
	}
	return out
}

func (ix *codeIndex) checkPath(rel, quoted string) []string {
	if strings.ContainsAny(rel, "*<>") || strings.Contains(rel, "NAME") || strings.Contains(rel, "DIR") || strings.Contains(rel, "/.") {
		return nil // a pattern, a placeholder, or a directory tools make (.bin, .state-etcd)
	}
	if _, err := os.Stat(filepath.Join(ix.root, rel)); err != nil {
		return []string{"no file or directory " + quoted}
	}
	return nil
}

// TestD1_DocsNameOnlyWhatExists: every name of code, test, make target,
// environment variable and path the docs quote exists.
func TestD1_DocsNameOnlyWhatExists(t *testing.T) {
	ix := repoIndex(t)
	for _, file := range docFiles(t) {
		for _, q := range quotes(t, file) {
			for _, p := range ix.problems(q) {
				t.Errorf("%s:%d: `%s`: %s", q.file, q.line, strings.TrimPrefix(q.text, "link:"), p)
			}
		}
	}
}
