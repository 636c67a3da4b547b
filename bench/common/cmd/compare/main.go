// Command compare runs W1..W7 on the COSI runtime, on resgraph and on the
// floor (a mutex-guarded map, see ../../floor), side by side, and prints a
// table of medians with the ratios resgraph/COSI and to the floor.
//
// Every run is a fresh child process: the COSI and resgraph runners are
// separate binaries (../../../cosi/cmd/run, ../../../resgraph/cmd/run, and
// for W7, which links each library's gRPC server and client,
// ../../../remote/cmd/run-cosi and run-resgraph); the floor is this binary
// re-executed with -child floor. Within a workload the
// backends alternate: COSI, resgraph, floor, COSI, resgraph, floor, ...
//
// Normally started through ../../../compare, which builds the runners.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/resgraph/resgraph/bench/common/floor"
	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
)

type config struct {
	reps    int
	quick   bool
	cosiBin string
	rgBin   string
	// the runners of W7, which link each library's gRPC server and client
	// (the other runners do not: see runnerBin)
	cosiRemoteBin string
	rgRemoteBin   string
	rgLog         string
	rgDesc        string
	cosiDesc      string
	only          string
	outPath       string
	timeout       time.Duration
	killAfter     time.Duration
	verbose       bool
	markdown      string // -markdown: also write the table as Markdown here
	command       string // the command line named in the Markdown table
	loadStart     string // the load average when the run started
	plan          plan
	chainNs       string
	noFindings    bool
	skipCOSI      bool
	skipFloor     bool
	rgWhy         string
	floorBinary   string

	// the etcd workloads (E1, E3)
	cosiEtcdBin  string
	rgEtcdBin    string
	floorEtcdBin string
	cosiEtcdDesc string
	etcdWhy      string
	etcd         etcdOpts
	e3Ns         string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-splice" {
		os.Exit(spliceMain(os.Args[1:], os.Stderr))
	}

	if len(os.Args) > 2 && os.Args[1] == "-child" {
		if os.Args[2] != bFloor {
			fmt.Fprintln(os.Stderr, "compare: -child knows only", bFloor)
			os.Exit(2)
		}

		runner.Main(floor.Backend, os.Args[3:])

		return
	}

	var c config

	flag.IntVar(&c.reps, "r", 5, "repetitions of each workload per backend")
	flag.BoolVar(&c.quick, "quick", false, "one repetition, smaller N (chain N=1000, W2 4000 updates): under 90 s")
	flag.StringVar(&c.cosiBin, "cosi", "", "COSI runner binary")
	flag.StringVar(&c.rgBin, "resgraph", "", "resgraph runner binary (empty: resgraph not available)")
	flag.StringVar(&c.cosiRemoteBin, "cosi-remote", "", "COSI's W7 runner binary (empty: COSI's W7 not run)")
	flag.StringVar(&c.rgRemoteBin, "resgraph-remote", "", "resgraph's W7 runner binary (empty: resgraph's W7 not run)")
	flag.StringVar(&c.rgLog, "resgraph-log", "", "resgraph build log, shown when resgraph is not available")
	flag.StringVar(&c.rgWhy, "resgraph-why", "", "why resgraph is not available (one line)")
	flag.StringVar(&c.rgDesc, "resgraph-desc", "resgraph", "how to name the resgraph build in the header")
	flag.StringVar(&c.cosiDesc, "cosi-desc", "github.com/cosi-project/runtime v1.16.2", "how to name the COSI build in the header")
	flag.StringVar(&c.only, "only", "", "comma-separated workloads to run (W1,...,W6); empty: all")
	flag.StringVar(&c.outPath, "out", "", "write every child's JSON result to this file (JSON lines)")
	flag.DurationVar(&c.timeout, "timeout", time.Minute, "bound on each run's waits (watchers after the writes; a whole chain run); quick: 15s")
	flag.DurationVar(&c.killAfter, "kill-after", 0, "kill a child after this long (0: 2 x -timeout + 30s + W2's paced time)")
	flag.BoolVar(&c.verbose, "v", false, "print every run's metrics as it finishes")
	flag.StringVar(&c.markdown, "markdown", "", "also write the table as Markdown (the README's format) to this file")
	flag.StringVar(&c.command, "command", "bench/compare", "the command named above the Markdown table")
	flag.IntVar(&c.plan.nW1, "n-w1", 10_000, "W1: resources")
	flag.StringVar(&c.chainNs, "n-chain", "1000,10000", "W3/W4: comma-separated N values")
	flag.IntVar(&c.plan.nRead, "n-read", 100_000, "W5/W6: resources")
	flag.IntVar(&c.plan.w2Updates, "w2-updates", 20_000, "W2: updates (paced runs take updates/rate seconds)")
	flag.IntVar(&c.plan.histCap, "histcap", 0, "COSI history max capacity where watchers run (0: sized to the workload, >= 65536)")
	flag.BoolVar(&c.noFindings, "no-defaults", false, "skip the runs of COSI with its default history")
	flag.BoolVar(&c.skipCOSI, "no-cosi", false, "do not run COSI")
	flag.BoolVar(&c.skipFloor, "no-floor", false, "do not run the floor")
	flag.StringVar(&c.cosiEtcdBin, "cosi-etcd", "", "E1/E3: COSI runner on github.com/cosi-project/state-etcd")
	flag.StringVar(&c.rgEtcdBin, "resgraph-etcd", "", "E1/E3: resgraph runner on its pkg/state/etcd")
	flag.StringVar(&c.floorEtcdBin, "etcd-floor", "", "E1: raw etcd client floor binary")
	flag.StringVar(&c.cosiEtcdDesc, "cosi-etcd-desc", "github.com/cosi-project/state-etcd", "how to name the state-etcd build in the header")
	flag.StringVar(&c.etcdWhy, "etcd-why", "", "what of the etcd runners did not build (one line)")
	flag.StringVar(&c.etcd.bin, "etcd-bin", "/usr/bin/etcd", "E1/E3: the etcd server binary (one is started per run)")
	flag.BoolVar(&c.etcd.shm, "etcd-shm", false, "E1/E3: etcd data dir on /dev/shm (tmpfs: fsync costs nothing)")
	flag.BoolVar(&c.etcd.noFsync, "etcd-nofsync", false, "E1/E3: start etcd with --unsafe-no-fsync (etcd >= 3.5)")
	flag.IntVar(&c.plan.nE1, "n-e1", params.DefaultE1.N, "E1: resources")
	flag.StringVar(&c.e3Ns, "n-e3", "1000", "E3: comma-separated N values")
	flag.Parse()

	if err := run(&c); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func (c *config) setup() error {
	if c.quick {
		c.reps = 1

		if !flagSet("n-chain") {
			c.chainNs = "1000"
		}

		if !flagSet("w2-updates") {
			c.plan.w2Updates = 4000
		}

		if !flagSet("timeout") {
			c.timeout = 15 * time.Second
		}
	}

	if c.reps < 1 {
		return errors.New("-r must be at least 1")
	}

	for f := range strings.SplitSeq(c.chainNs, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-n-chain: bad N %q", f)
		}

		c.plan.nChain = append(c.plan.nChain, n)
	}

	for f := range strings.SplitSeq(c.e3Ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-n-e3: bad N %q", f)
		}

		c.plan.nE3 = append(c.plan.nE3, n)
	}

	c.plan.findings = !c.noFindings && !c.skipCOSI

	self, err := os.Executable()
	if err != nil {
		return err
	}

	c.floorBinary = self

	return nil
}

func flagSet(name string) bool {
	set := false

	flag.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})

	return set
}

// outcome is one child run.
type outcome struct {
	runner.Result

	PeakRSSMiB float64 `json:"peak_rss_mib"`
	Case       string  `json:"case"`
	Rep        int     `json:"rep"`
}

func run(c *config) error {
	if err := c.setup(); err != nil {
		return err
	}

	c.loadStart = loadAverage()

	avail := map[string]bool{bCOSI: c.cosiBin != "" && !c.skipCOSI, bResgraph: c.rgBin != "", bFloor: !c.skipFloor}

	var out io.Writer = io.Discard

	if c.outPath != "" {
		f, err := os.Create(c.outPath)
		if err != nil {
			return err
		}
		defer f.Close()

		out = f
	}

	var cases []kase

	for _, k := range c.plan.cases() {
		named := strings.Contains(","+strings.ToUpper(c.only)+",", ","+k.args[1]+",")
		if named || (c.only == "" && !k.etcd) {
			cases = append(cases, k)
		}
	}

	total := 0

	for _, k := range cases {
		reps := c.reps
		if k.finding {
			reps = 1
		}

		for _, b := range k.backends {
			if c.has(avail, k, b) {
				total += reps
			}
		}
	}

	results := map[string]map[string][]outcome{}
	started := time.Now()
	done := 0
	gaveUp := map[string]bool{} // case+backend that timed out: not run again

	for _, k := range cases {
		results[k.name] = map[string][]outcome{}

		reps := c.reps
		if k.finding {
			reps = 1
		}

		for rep := 1; rep <= reps; rep++ {
			for _, b := range k.backends {
				if !c.has(avail, k, b) {
					continue
				}

				if gaveUp[k.name+"/"+b] {
					done++

					fmt.Fprintf(os.Stderr, "[%3d/%d %5.0fs] %-34s %-8s rep %d  skipped: an earlier repetition timed out\n",
						done, total, time.Since(started).Seconds(), k.name, b, rep)

					continue
				}

				o := c.runChild(b, k, rep)
				done++

				if o.timedOut() {
					gaveUp[k.name+"/"+b] = true
				}

				results[k.name][b] = append(results[k.name][b], o)

				line, _ := json.Marshal(o) //nolint:errchkjson // plain data
				fmt.Fprintln(out, string(line))

				status := "ok"
				if o.Error != "" {
					status = "ERROR: " + firstLine(o.Error)
				}

				fmt.Fprintf(os.Stderr, "[%3d/%d %5.0fs] %-34s %-8s rep %d  %.2fs  %s\n",
					done, total, time.Since(started).Seconds(), k.name, b, rep, o.Seconds, status)

				if c.verbose {
					fmt.Fprintf(os.Stderr, "      %s\n", compactMetrics(o.Metrics))
				}
			}
		}
	}

	// resgraph was measured if either of its runners was built
	availReport := map[string]bool{bCOSI: avail[bCOSI] || c.cosiEtcdBin != "", bResgraph: avail[bResgraph] || c.rgEtcdBin != "", bFloor: avail[bFloor]}

	printReport(os.Stdout, c, availReport, cases, results, time.Since(started))

	if c.markdown != "" {
		return writeMarkdown(c.markdown, c, availReport, cases, results, time.Since(started))
	}

	return nil
}

func (c *config) runChild(backend string, k kase, rep int) outcome {
	o := outcome{Case: k.name, Rep: rep}
	o.Backend = backend

	var (
		bin  string
		args []string
	)

	switch {
	case k.etcd:
		bin = c.etcdBinary(backend)
		args = append(args, k.args...)
	case backend == bCOSI:
		bin = c.runnerBin(backend, k)
		args = append(args, k.args...)

		if k.histCap > 0 {
			args = append(args, "-histcap", strconv.Itoa(k.histCap))
		}
	case backend == bResgraph:
		bin = c.runnerBin(backend, k)
		args = append(args, k.args...)
	case backend == bFloor:
		bin = c.floorBinary
		args = append([]string{"-child", bFloor}, k.args...)
	}

	kill := c.killAfter
	if kill <= 0 {
		kill = 2*c.timeout + 30*time.Second + k.paced
	}

	args = append(args, "-timeout", c.timeout.String())

	var srv *etcdServer

	if k.etcd {
		var err error

		if srv, err = startEtcd(c.etcd, c.etcdLogDir()); err != nil {
			o.Error = err.Error()
			o.Metrics = map[string]float64{}

			return o
		}

		args = append(args, "-etcd", srv.endpoint)
	}

	ctx, cancel := context.WithTimeout(context.Background(), kill)
	defer cancel()

	var stdout, stderr bytes.Buffer

	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()

	if line := lastJSONLine(stdout.Bytes()); line != nil {
		if jerr := json.Unmarshal(line, &o.Result); jerr != nil && err == nil {
			err = jerr
		}
	}

	o.Backend = backend

	if o.Metrics == nil {
		o.Metrics = map[string]float64{}
	}

	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			o.PeakRSSMiB = float64(ru.Maxrss) / 1024 // Linux: KiB
			o.Metrics[mPeakRSS] = o.PeakRSSMiB
		}
	}

	if srv != nil {
		o.Metrics[mEtcdCPU] = srv.stop()
	}

	if o.Error == "" && err != nil {
		msg := err.Error()
		if ctx.Err() != nil {
			msg = fmt.Sprintf("killed after %v (timeout)", kill)
		}

		if s := strings.TrimSpace(stderr.String()); s != "" {
			msg += ": " + stderrGist(s)
		}

		o.Error = msg
	}

	return o
}

// has reports whether backend b runs case k.
func (c *config) has(avail map[string]bool, k kase, b string) bool {
	if !k.etcd {
		return avail[b] && (b == bFloor || c.runnerBin(b, k) != "")
	}

	switch b {
	case bCOSI:
		return !c.skipCOSI && c.cosiEtcdBin != ""
	case bFloor:
		return !c.skipFloor && c.floorEtcdBin != ""
	default:
		return c.etcdBinary(b) != ""
	}
}

// runnerBin returns the runner of library b (COSI or resgraph) for the
// in-memory case k: W7's runner, which links the library's gRPC server and
// client, for W7; for every other workload the runner that links the
// library alone, as a daemon that serves no remote API would ("" when it
// was not built).
func (c *config) runnerBin(b string, k kase) string {
	switch {
	case b == bCOSI && k.remote:
		return c.cosiRemoteBin
	case b == bCOSI:
		return c.cosiBin
	case k.remote:
		return c.rgRemoteBin
	default:
		return c.rgBin
	}
}

func (c *config) etcdBinary(b string) string {
	switch b {
	case bCOSI:
		return c.cosiEtcdBin
	case bResgraph:
		return c.rgEtcdBin
	default:
		return c.floorEtcdBin
	}
}

// timedOut reports whether a run hit a timeout (killed, a chain that did
// not converge, watchers that did not finish).
func (o outcome) timedOut() bool {
	return strings.Contains(o.Error, "timeout") || strings.Contains(o.Error, "deadline exceeded") ||
		o.Metrics[runner.MTimedOut] == 1
}

func lastJSONLine(b []byte) []byte {
	var last []byte

	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)

	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 && l[0] == '{' {
			last = append(last[:0], l...)
		}
	}

	return last
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")

	if len(s) > 160 {
		s = s[:160] + "…"
	}

	return s
}

// stderrGist picks what explains a failed child: a panic or fatal error
// with the frame that raised it, else its last lines.
func stderrGist(s string) string {
	lines := strings.Split(s, "\n")

	for i, l := range lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			gist := []string{l}

			// the first frame below "goroutine N [running]:" is the function that panicked
			for j := i + 1; j < len(lines) && j < i+12; j++ {
				if strings.HasPrefix(lines[j], "goroutine ") && j+2 < len(lines) {
					gist = append(gist, strings.TrimSpace(lines[j+1]), strings.TrimSpace(lines[j+2]))

					break
				}
			}

			return strings.Join(gist, " | ")
		}
	}

	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}

	return strings.Join(lines, " | ")
}

func compactMetrics(m map[string]float64) string {
	var b strings.Builder

	for _, k := range sortedKeys(m) {
		fmt.Fprintf(&b, "%s=%s ", k, human(m[k]))
	}

	return b.String()
}

func goInfo() string {
	return fmt.Sprintf("%s, GOMAXPROCS=%d, %d CPUs", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU())
}
