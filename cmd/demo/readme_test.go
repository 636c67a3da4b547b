package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeWalkthrough returns the code spans of docs/demo.md's walkthrough of
// the demo's output (the list after "What the output means:"): each is a
// fragment of a line the demo prints, "..." standing for any text.
func readmeWalkthrough(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../docs/demo.md")
	require.NoError(t, err)
	doc := string(b)
	const from, to = "What the output means:", "\nOther commands:"
	i := strings.Index(doc, from)
	require.GreaterOrEqual(t, i, 0, "docs/demo.md walks through the demo's output after %q", from)
	j := strings.Index(doc[i:], to)
	require.Greater(t, j, 0, "the walkthrough ends before %q", to)
	var spans []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(doc[i:i+j], -1) {
		spans = append(spans, m[1])
	}
	return spans
}

// squeeze collapses every run of white space to one space (docs/demo.md
// wraps its lines, the demo aligns its columns).
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }

// matchesQuote reports whether line holds the fragments of quote ("..."
// between them, any text) in order.
func matchesQuote(line, quote string) bool {
	line = squeeze(line)
	for frag := range strings.SplitSeq(squeeze(quote), "...") {
		frag = strings.TrimSpace(frag)
		k := strings.Index(line, frag)
		if k < 0 {
			return false
		}
		line = line[k+len(frag):]
	}
	return true
}

func TestMatchesQuote(t *testing.T) {
	line := `05:11:35.365 WARN runtime reconcile failed; retrying after backoff {"error": "apply link eth1 (attempt 1): device or resource busy"}`
	assert.True(t, matchesQuote(line, "WARN runtime reconcile failed; retrying after backoff ... device or resource\n   busy"))
	assert.False(t, matchesQuote(line, "ERROR ... reconcile failed; retrying with backoff ... device or resource busy"))
	assert.False(t, matchesQuote(line, "device or resource busy ... reconcile failed"), "fragments in order")
	assert.True(t, matchesQuote("INFO state created    LinkStatus(network/eth0) v1", "created LinkStatus"))
}

// TestTheREADMEQuotesLinesTheDemoPrints: every line fragment docs/demo.md's
// walkthrough of the demo's output quotes is printed by a run of the demo
// (its default flags, with a shorter run and faster flapping), and every
// WARN or ERROR line of that run is one the walkthrough quotes.
func TestTheREADMEQuotesLinesTheDemoPrints(t *testing.T) {
	quotes := readmeWalkthrough(t)
	require.GreaterOrEqual(t, len(quotes), 10, "the walkthrough quotes the demo's lines: %q", quotes)

	var out, errOut syncBuffer
	code := mainWithExit([]string{"run", "--duration", "3s", "--flap-min", "200ms", "--flap-max", "400ms"}, &out, &errOut)
	require.Zero(t, code, "stderr: %s", errOut.String())
	lines := strings.Split(out.String(), "\n")
	for _, q := range quotes {
		found := false
		for _, l := range lines {
			if matchesQuote(l, q) {
				found = true
				break
			}
		}
		assert.True(t, found, "docs/demo.md quotes %q; the demo printed no such line", q)
	}
	// And every WARN or ERROR line it printed is one the walkthrough
	// quotes (the simulated kernel's refusals): no other warning.
	for _, w := range warnings(out.String()) {
		explained := false
		for _, q := range quotes {
			explained = explained || (strings.Contains(q, "WARN") || strings.Contains(q, "ERROR")) && matchesQuote(w, q)
		}
		assert.True(t, explained, "the demo printed a WARN or ERROR line docs/demo.md does not explain: %s", w)
	}
	if t.Failed() {
		t.Logf("the demo printed:\n%s", out.String())
	}
}

// TestREADME_TheGraphIsTheDemosGraph: the controller/resource graph
// docs/demo.md shows (its mermaid block) is what `demo graph --format mermaid`
// prints, so that it follows the demo's controllers and the graph's
// labels.
func TestREADME_TheGraphIsTheDemosGraph(t *testing.T) {
	b, err := os.ReadFile("../../docs/demo.md")
	require.NoError(t, err)
	doc := string(b)
	const from = "```mermaid\n"
	i := strings.Index(doc, from)
	require.GreaterOrEqual(t, i, 0, "docs/demo.md shows the demo's graph in a %q block", from)
	j := strings.Index(doc[i+len(from):], "```")
	require.Greater(t, j, 0, "docs/demo.md's mermaid block ends")
	var stdout, stderr strings.Builder
	require.Equal(t, 0, mainWithExit([]string{"graph", "--format", "mermaid"}, &stdout, &stderr), stderr.String())
	assert.Equal(t, strings.TrimSpace(stdout.String()), strings.TrimSpace(doc[i+len(from):i+len(from)+j]),
		"docs/demo.md's graph is not the demo's: paste `go run ./cmd/demo graph --format mermaid`")
}
