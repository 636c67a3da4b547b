package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSplice_ReplacesWhatLiesBetweenTheMarkers: -splice puts the table
// between the markers, drops what was there and keeps the rest.
func TestSplice_ReplacesWhatLiesBetweenTheMarkers(t *testing.T) {
	dir := t.TempDir()
	table, doc := filepath.Join(dir, "table.md"), filepath.Join(dir, "README.md")
	write(t, table, "| new |\n")
	write(t, doc, "before\n"+spliceBegin+"\n| old |\n"+spliceEnd+"\nafter\n")

	if err := splice(table, doc); err != nil {
		t.Fatal(err)
	}

	got, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}

	if want := "before\n" + spliceBegin + "\n| new |\n" + spliceEnd + "\nafter\n"; string(got) != want {
		t.Fatalf("spliced:\n%s\nwant:\n%s", got, want)
	}
}

// TestSplice_RefusesADocumentWithoutTheMarkers: the error names the
// markers, and the document is left as it was.
func TestSplice_RefusesADocumentWithoutTheMarkers(t *testing.T) {
	dir := t.TempDir()
	table, doc := filepath.Join(dir, "table.md"), filepath.Join(dir, "README.md")
	write(t, table, "| new |\n")
	write(t, doc, "no markers\n")

	err := splice(table, doc)
	if err == nil || !strings.Contains(err.Error(), spliceBegin) {
		t.Fatalf("splice into a document without markers: %v", err)
	}

	if got, _ := os.ReadFile(doc); string(got) != "no markers\n" {
		t.Fatalf("the document changed: %q", got)
	}
}

// TestSplice_TheREADMEHasTheMarkers: the repository's docs/benchmarks.md
// has the place for the table that --update-readme writes.
func TestSplice_TheREADMEHasTheMarkers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}

	i, j := strings.Index(string(b), spliceBegin), strings.Index(string(b), spliceEnd)
	if i < 0 || j < i {
		t.Fatalf("docs/benchmarks.md has no %q ... %q", spliceBegin, spliceEnd)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()

	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
