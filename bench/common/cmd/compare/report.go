package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/bench/common/runner"
)

// cell is one backend's figures for one metric of one case.
type cell struct {
	values []float64 // from valid runs
	bad    []float64 // from runs whose watchers were cut off or did not finish
	errors int       // runs that failed
	runs   int
}

func (c cell) ok() bool { return len(c.values) > 0 }

func (c cell) median() float64 { return median(c.values) }

func median(vs []float64) float64 {
	v := slices.Clone(vs)
	slices.Sort(v)

	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}

	return (v[n/2-1] + v[n/2]) / 2
}

func (c cell) spread() float64 {
	if len(c.values) < 2 {
		return 0
	}

	m := c.median()
	if m == 0 {
		return 0
	}

	return (slices.Max(c.values) - slices.Min(c.values)) / math.Abs(m)
}

// cellOf collects one metric over a backend's runs of k. A compared metric
// (not info) of a run whose watchers were cut off or did not finish is set
// apart: such a run did less work than the workload asks.
func cellOf(k kase, m metric, runs []outcome) cell {
	c := cell{runs: len(runs)}

	for _, o := range runs {
		if o.Error != "" {
			c.errors++

			continue
		}

		v, ok := o.Metrics[m.key]
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}

		if m.dir != info && !k.complete(o) {
			c.bad = append(c.bad, v)

			continue
		}

		c.values = append(c.values, v)
	}

	return c
}

// complete reports whether every watcher of a run saw the final state of
// every resource without being cut off.
func (k kase) complete(o outcome) bool {
	if k.watchers == 0 {
		return true
	}

	return o.Metrics[runner.MComplete] == float64(k.watchers) && o.Metrics[runner.MCut] == 0 && o.Metrics[runner.MTimedOut] == 0
}

func (c cell) String() string {
	switch {
	case c.runs == 0:
		return "-"
	case !c.ok() && len(c.bad) > 0:
		return human(median(c.bad)) + "!"
	case !c.ok() && c.errors > 0:
		return "ERR"
	case !c.ok():
		return "n/a"
	}

	s := human(c.median())
	if c.errors > 0 || len(c.bad) > 0 {
		s += "*"
	}

	return s
}

// human formats a figure with 3 significant digits and a k/M suffix.
func human(v float64) string {
	a := math.Abs(v)

	switch {
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return trim(v/1e3) + "k"
	case a == 0:
		return "0"
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3g", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

func trim(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func ratio(a, b cell) (float64, bool) {
	if !a.ok() || !b.ok() || b.median() == 0 {
		return 0, false
	}

	return a.median() / b.median(), true
}

func ratioString(a, b cell) string {
	r, ok := ratio(a, b)
	if !ok {
		return ""
	}

	return fmt.Sprintf("%.2f", r)
}

// goodness turns a ratio x/y into "how many times better x is than y".
func goodness(r float64, dir int) float64 {
	if dir == lower {
		return 1 / r
	}

	return r
}

func dirString(d int) string {
	switch d {
	case higher:
		return "hi"
	case lower:
		return "lo"
	default:
		return ""
	}
}

type summaryAcc struct {
	logSum        float64
	n, better     int
	worst, best   float64
	worstN, bestN string
}

func (s *summaryAcc) add(g float64, name string) {
	if g <= 0 || math.IsInf(g, 0) || math.IsNaN(g) {
		return
	}

	if s.n == 0 || g < s.worst {
		s.worst, s.worstN = g, name
	}

	if s.n == 0 || g > s.best {
		s.best, s.bestN = g, name
	}

	s.logSum += math.Log(g)
	s.n++

	if g > 1 {
		s.better++
	}
}

func (s *summaryAcc) geomean() float64 { return math.Exp(s.logSum / float64(max(1, s.n))) }

func printReport(w io.Writer, c *config, avail map[string]bool, cases []kase, res map[string]map[string][]outcome, took time.Duration) {
	fmt.Fprintf(w, "\nbench/compare  %s  %s  R=%d (medians of R fresh processes per backend; rusage peak RSS per run)  took %s\n",
		time.Now().Format("2006-01-02 15:04"), goInfo(), c.reps, took.Round(time.Second))
	fmt.Fprintf(w, "  machine:  load average (1 min) %s at the start, %s at the end (figures of a loaded machine are not comparable)\n",
		c.loadStart, loadAverage())

	if avail[bCOSI] {
		fmt.Fprintf(w, "  COSI:     %s; state.WrapCore(namespaced.NewState(inmem...)); runtime.NewRuntime(st, zap.NewNop()) defaults\n", c.cosiDesc)
		if h := historyLine(cases); h != "" {
			fmt.Fprintf(w, "            history: %s\n", h)
		}
	} else {
		fmt.Fprintln(w, "  COSI:     not run")
	}

	if avail[bResgraph] {
		fmt.Fprintf(w, "  resgraph: %s; inmem.NewState() and runtime.New(st, zap.NewNop()) with default options\n", c.rgDesc)
	} else {
		fmt.Fprintln(w, "  resgraph: NOT AVAILABLE (see below); its columns are empty")
	}

	if avail[bFloor] {
		fmt.Fprintln(w, "  floor:    mutex-guarded map per kind, copy on every write and read, sorted IDs for List (W1 without watchers, W5, W6)")
	}

	if slices.ContainsFunc(cases, func(k kase) bool { return k.etcd }) {
		fmt.Fprintf(w, "  etcd:     %s\n", c.etcd.describe())
		fmt.Fprintf(w, "            E runners: COSI %s; resgraph %s; floor %s\n",
			orNone(c.cosiEtcdBin, c.cosiEtcdDesc), orNone(c.rgEtcdBin, "pkg/state/etcd of "+c.rgDesc), orNone(c.floorEtcdBin, "raw clientv3 Txn of pre-encoded values (E1)"))

		if c.etcdWhy != "" {
			fmt.Fprintf(w, "            not built: %s\n", c.etcdWhy)
		}
	}

	fmt.Fprintln(w, "  dir: hi = higher is better, lo = lower is better; ratios are plain quotients of the medians")
	fmt.Fprintln(w, "  ! = every run had watchers cut off or unfinished (did less than the workload asks): no ratio, not in the summary")
	fmt.Fprintln(w, "  * = some runs failed or had watchers cut off; the median is over the others")
	fmt.Fprintln(w)

	const rowFmt = "%-34s %-23s %-3s %10s %10s %10s %8s %8s %10s\n"

	fmt.Fprintf(w, rowFmt, "workload", "metric", "dir", "COSI", "resgraph", "floor", "rg/COSI", "rg/floor", "COSI/floor")
	fmt.Fprintln(w, strings.Repeat("-", 124))

	var (
		sum  summary
		errs []string
	)

	for _, k := range cases {
		if k.finding {
			continue
		}

		r := res[k.name]
		name := k.name

		for _, m := range k.metrics {
			cc, rc, fc := k.cells(m, r)
			if cc.runs+rc.runs+fc.runs == 0 {
				continue
			}

			fmt.Fprintf(w, rowFmt, name, m.label, dirString(m.dir), cc, rc, fc,
				ratioString(rc, cc), ratioString(rc, fc), ratioString(cc, fc))

			name = ""

			sum.add(k, m, cc, rc, fc)
		}

		for _, b := range []string{bCOSI, bResgraph, bFloor} {
			for _, o := range r[b] {
				if o.Error != "" {
					errs = append(errs, fmt.Sprintf("%s / %s rep %d: %s", k.name, b, o.Rep, firstLine(o.Error)))
				}
			}
		}
	}

	if c.verbose {
		printSpread(w, cases, res)
	}

	printFindings(w, cases, res)

	if len(errs) > 0 {
		fmt.Fprintln(w, "\nFailed runs:")

		for _, e := range errs {
			fmt.Fprintln(w, "  "+e)
		}
	}

	if !avail[bResgraph] {
		printResgraphMissing(w, c)
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, sum.line(avail))
}

// cells are the COSI, resgraph and floor figures of one metric of k (the
// floor's empty where k does not run it).
func (k kase) cells(m metric, r map[string][]outcome) (cc, rc, fc cell) {
	cc, rc, fc = cellOf(k, m, r[bCOSI]), cellOf(k, m, r[bResgraph]), cellOf(k, m, r[bFloor])
	if !slices.Contains(k.backends, bFloor) {
		fc = cell{}
	}

	return cc, rc, fc
}

// summary accumulates the summary line's geometric means.
type summary struct{ vsCOSI, cosiFloor, rgFloor summaryAcc }

func (s *summary) add(k kase, m metric, cc, rc, fc cell) {
	label := k.name + " " + m.label

	if m.headline && m.dir != info {
		if q, ok := ratio(rc, cc); ok {
			s.vsCOSI.add(goodness(q, m.dir), label)
		}
	}

	if m.dir != info && m.key != mPeakRSS {
		if q, ok := ratio(cc, fc); ok {
			s.cosiFloor.add(goodness(q, m.dir), label)
		}

		if q, ok := ratio(rc, fc); ok {
			s.rgFloor.add(goodness(q, m.dir), label)
		}
	}
}

func (s *summary) line(avail map[string]bool) string {
	return summaryLine(avail, &s.vsCOSI, &s.cosiFloor, &s.rgFloor)
}

func orNone(bin, desc string) string {
	if bin == "" {
		return "NOT BUILT"
	}

	return desc
}

func historyLine(cases []kase) string {
	byCap := map[int][]string{}

	for _, k := range cases {
		if !k.finding && !k.etcd && slices.Contains(k.backends, bCOSI) {
			byCap[k.histCap] = append(byCap[k.histCap], shortName(k.name))
		}
	}

	var parts []string

	for _, hc := range sortedKeys(byCap) {
		what := "COSI default (100 events per kind, gap 5)"
		if hc > 0 {
			what = fmt.Sprintf("inmem.WithHistoryMaxCapacity(%d)", hc)
		}

		parts = append(parts, fmt.Sprintf("%s for %s", what, strings.Join(byCap[hc], ", ")))
	}

	return strings.Join(parts, "; ")
}

func shortName(s string) string {
	s = strings.Replace(s, "create+update, ", "", 1)
	s = strings.Replace(s, "fan-out 64, ", "", 1)

	return s
}

func printSpread(w io.Writer, cases []kase, res map[string]map[string][]outcome) {
	fmt.Fprintln(w, "\nSpread ((max-min)/median) and all values:")

	for _, k := range cases {
		for _, m := range k.metrics {
			for _, b := range k.backends {
				cl := cellOf(k, m, res[k.name][b])
				if !cl.ok() {
					continue
				}

				vals := make([]string, len(cl.values))
				for i, v := range cl.values {
					vals[i] = human(v)
				}

				fmt.Fprintf(w, "  %-34s %-23s %-8s %5.0f%%  [%s]\n", k.name, m.label, b, 100*cl.spread(), strings.Join(vals, " "))
			}
		}
	}
}

func printFindings(w io.Writer, cases []kase, res map[string]map[string][]outcome) {
	first := true

	for _, k := range cases {
		if !k.finding {
			continue
		}

		if first {
			fmt.Fprintln(w, "\nFindings: COSI with its default history (100 events per kind), one run each:")

			first = false
		}

		for _, o := range res[k.name][bCOSI] {
			var parts []string

			for _, m := range k.metrics {
				if v, ok := o.Metrics[m.key]; ok {
					parts = append(parts, fmt.Sprintf("%s %s", m.label, human(v)))
				}
			}

			line := strings.Join(parts, ", ")
			if o.Error != "" {
				line = "FAILED: " + firstLine(o.Error)
			}

			fmt.Fprintf(w, "  %-34s %s\n", k.name, line)
		}
	}
}

func printResgraphMissing(w io.Writer, c *config) {
	fmt.Fprintln(w, "\nresgraph could NOT be built, so only COSI and the floor were measured.")

	if c.rgWhy != "" {
		fmt.Fprintln(w, "  "+c.rgWhy)
	}

	if c.rgLog == "" {
		return
	}

	b, err := os.ReadFile(c.rgLog)
	if err != nil {
		return
	}

	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 25 {
		lines = lines[:25]
	}

	fmt.Fprintln(w, "  first lines of the build log ("+c.rgLog+"):")

	for _, l := range lines {
		fmt.Fprintln(w, "    "+l)
	}
}

func summaryLine(avail map[string]bool, vsCOSI, cosiFloor, rgFloor *summaryAcc) string {
	var b strings.Builder

	b.WriteString("SUMMARY: ")

	switch {
	case avail[bResgraph] && vsCOSI.n > 0:
		fmt.Fprintf(&b, "resgraph vs COSI %.2fx (geomean of resgraph's advantage, >1 = resgraph better) over %d headline metrics: better on %d, worse on %d; best %s %.2fx, worst %s %.2fx",
			vsCOSI.geomean(), vsCOSI.n, vsCOSI.better, vsCOSI.n-vsCOSI.better, vsCOSI.bestN, vsCOSI.best, vsCOSI.worstN, vsCOSI.worst)
	case avail[bResgraph] && rgFloor.n > 0:
		b.WriteString("resgraph measured beside the floor alone (the established runtime left out or not measured)")
	case avail[bResgraph]:
		b.WriteString("resgraph built but NOT measured (its runs failed, see above)")
	default:
		b.WriteString("resgraph NOT measured (could not be built)")
	}

	if cosiFloor.n > 0 {
		fmt.Fprintf(&b, "; COSI costs %.2fx the floor", 1/cosiFloor.geomean())
	}

	if rgFloor.n > 0 {
		fmt.Fprintf(&b, "; resgraph costs %.2fx the floor", 1/rgFloor.geomean())
	}

	if cosiFloor.n > 0 || rgFloor.n > 0 {
		fmt.Fprintf(&b, " (geomean over %d floor metrics)", max(cosiFloor.n, rgFloor.n))
	}

	return b.String()
}

func sortedKeys[K int | string, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}

	slices.Sort(ks)

	return ks
}
