package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// The markers around the table in docs/benchmarks.md that -splice
// replaces.
const (
	spliceBegin = "<!-- bench/compare: begin -->"
	spliceEnd   = "<!-- bench/compare: end -->"
)

// loadAverage returns the machine's 1-minute load average as /proc/loadavg
// gives it, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}

	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}

	return "unknown"
}

// writeMarkdown writes the compared figures of a run as the README's
// table: the command that produced it, where and when, then a row per
// metric that is headline or has a floor figure, and the summary line.
func writeMarkdown(path string, c *config, avail map[string]bool, cases []kase, res map[string]map[string][]outcome, took time.Duration) error {
	var b bytes.Buffer

	fmt.Fprintf(&b, "`%s`: %s, %s; established: %s; %s; load average %s at the start, %s at the end; took %s.\n\n",
		c.command, c.rgDesc, time.Now().UTC().Format("2006-01-02 15:04 UTC"), c.cosiDesc, goInfo(),
		c.loadStart, loadAverage(), took.Round(time.Second))
	fmt.Fprintln(&b, "| workload | metric | established | resgraph | floor | vs established | vs floor |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- | --- | --- | --- |")

	var sum summary

	for _, k := range cases {
		if k.finding {
			continue
		}

		name := k.name

		for _, m := range k.metrics {
			cc, rc, fc := k.cells(m, res[k.name])
			sum.add(k, m, cc, rc, fc)

			if m.dir == info || (!m.headline && !fc.ok()) || cc.runs+rc.runs+fc.runs == 0 {
				continue
			}

			vs := ""
			if q, ok := ratio(rc, cc); ok {
				vs = fmt.Sprintf("%.2f×", goodness(q, m.dir))
			}

			fmt.Fprintf(&b, "| %s | %s (%s) | %s | %s | %s | %s | %s |\n", name, m.label, dirString(m.dir),
				mdCell(cc), mdCell(rc), mdCell(fc), vs, suffix(ratioString(rc, fc), "×"))

			name = ""
		}
	}

	fmt.Fprintf(&b, "\n%s\n", strings.ReplaceAll(sum.line(avail), "COSI", "the established runtime"))

	return os.WriteFile(path, b.Bytes(), 0o644)
}

func mdCell(c cell) string {
	if c.runs == 0 {
		return ""
	}

	return strings.ReplaceAll(c.String(), "*", `\*`)
}

func suffix(s, suf string) string {
	if s == "" {
		return ""
	}

	return s + suf
}

// splice replaces what lies between the markers in the file into with the
// contents of the file from.
func splice(from, into string) error {
	table, err := os.ReadFile(from)
	if err != nil {
		return err
	}

	doc, err := os.ReadFile(into)
	if err != nil {
		return err
	}

	i := bytes.Index(doc, []byte(spliceBegin))
	j := bytes.Index(doc, []byte(spliceEnd))

	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q markers to put the table between", into, spliceBegin, spliceEnd)
	}

	out := slices.Concat(doc[:i+len(spliceBegin)], []byte("\n"), table, doc[j:])

	return os.WriteFile(into, out, 0o644)
}

// spliceMain is the driver's -splice FILE -into DOC mode.
func spliceMain(args []string, stderr io.Writer) int {
	if len(args) != 4 || args[0] != "-splice" || args[2] != "-into" {
		fmt.Fprintln(stderr, "usage: compare -splice TABLE.md -into docs/benchmarks.md")

		return 2
	}

	if err := splice(args[1], args[3]); err != nil {
		fmt.Fprintln(stderr, "compare:", err)

		return 1
	}

	return 0
}
