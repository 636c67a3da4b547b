package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/resgraph/resgraph/bench/common/params"
	"github.com/resgraph/resgraph/bench/common/runner"
)

// Backends.
const (
	bCOSI     = "cosi"
	bResgraph = "resgraph"
	bFloor    = "floor"
)

// Direction of a metric: which way is better.
const (
	info   = 0  // not compared in the summary
	higher = 1  // higher is better
	lower  = -1 // lower is better
)

// metric is one row of the table.
type metric struct {
	key      string
	label    string
	dir      int
	headline bool // counted in the summary's geometric mean
}

// kase is one workload variant: the same child arguments for every backend.
type kase struct {
	name     string
	args     []string
	backends []string
	histCap  int  // -histcap passed to COSI (0: COSI defaults)
	watchers int  // watchers that must all finish for a run to count (0: none)
	finding  bool // a COSI-defaults run: once, COSI only, reported apart
	metrics  []metric
	paced    time.Duration // how long the writer is paced (W2)
	etcd     bool          // an E workload: a fresh etcd per run, the etcd runners
	remote   bool          // W7: the runners that link the libraries' gRPC servers and clients
}

// plan is what the flags ask for.
type plan struct {
	nW1       int
	nChain    []int
	nRead     int // W5, W6
	w2Updates int
	histCap   int // 0: sized to the workload
	findings  bool
	nE1       int
	nE3       []int
}

var peakRSS = metric{key: mPeakRSS, label: "peak RSS MiB (rusage)", dir: lower}

// mPeakRSS is added by the driver from the child's rusage.
const mPeakRSS = "peak_rss_mib"

func w1Metrics(watchers int) []metric {
	ms := []metric{
		{key: runner.MOpsPerS, label: "writer ops/s", dir: higher, headline: true},
		{key: runner.MAllocsPerOp, label: "allocs/op", dir: lower, headline: true},
		{key: runner.MBytesPerOp, label: "bytes/op", dir: lower},
	}

	if watchers > 0 {
		ms = append(ms,
			metric{key: runner.MDrainMs, label: "drain ms (all final)", dir: lower, headline: true},
			metric{key: runner.MEventsFrac, label: "events delivered frac", dir: info},
			metric{key: runner.MCut, label: "watchers cut off", dir: info},
			metric{key: runner.MComplete, label: "watchers complete", dir: info},
		)
	}

	return append(ms, peakRSS)
}

func w2Metrics(paced bool) []metric {
	var ms []metric

	if !paced {
		ms = append(ms, metric{key: runner.MUpdPerS, label: "writer upd/s", dir: higher, headline: true})
	}

	ms = append(ms,
		metric{key: runner.MP50Us, label: "p50 delay µs", dir: lower, headline: true},
		metric{key: runner.MP99Us, label: "p99 delay µs", dir: lower, headline: true},
		metric{key: runner.MMaxUs, label: "max delay µs", dir: info},
		metric{key: runner.MDeliveredFrac, label: "updates delivered frac", dir: info},
		metric{key: runner.MCut, label: "watchers cut off", dir: info},
		metric{key: runner.MComplete, label: "watchers complete", dir: info},
		peakRSS,
	)

	return ms
}

var chainMetrics = []metric{
	{key: runner.MCreateResPerS, label: "create res/s", dir: higher, headline: true},
	{key: runner.MUpdateResPerS, label: "update res/s", dir: higher, headline: true},
	{key: mPeakRSS, label: "peak RSS MiB (rusage)", dir: lower, headline: true},
}

var w5Metrics = []metric{
	{key: runner.MListMs, label: "List ms (median)", dir: lower, headline: true},
	{key: runner.MListAllocs, label: "allocs per List", dir: info},
	{key: runner.MGetNs, label: "Get ns", dir: lower, headline: true},
	{key: runner.MGetAllocs, label: "allocs per Get", dir: info},
	{key: runner.MPopulateMs, label: "populate ms", dir: lower},
	peakRSS,
}

// e1Metrics: W1's, with the delay from a write's return to its receipt.
func e1Metrics(watchers int) []metric {
	ms := []metric{
		{key: runner.MOpsPerS, label: "writer ops/s", dir: higher, headline: true},
	}

	if watchers > 0 {
		ms = append(ms,
			metric{key: runner.MP99Us, label: "p99 event delay µs", dir: lower, headline: true},
			metric{key: runner.MP50Us, label: "p50 event delay µs", dir: lower},
			metric{key: runner.MCallP99Us, label: "p99 delay from call µs", dir: lower},
			metric{key: runner.MNegatives, label: "frac recv before return", dir: info},
			metric{key: runner.MDrainMs, label: "drain ms (all final)", dir: lower},
		)
	}

	ms = append(ms,
		metric{key: runner.MBytesPerOp, label: "bytes/op (client)", dir: lower, headline: true},
		metric{key: runner.MAllocsPerOp, label: "allocs/op (client)", dir: lower},
		metric{key: runner.MValueBytes, label: "stored value bytes", dir: info},
	)

	if watchers > 0 {
		ms = append(ms,
			metric{key: runner.MEventsFrac, label: "events delivered frac", dir: info},
			metric{key: runner.MComplete, label: "watchers complete", dir: info},
		)
	}

	return append(ms, peakRSS, etcdCPU)
}

// etcdCPU is added by the driver from the etcd server's rusage.
var etcdCPU = metric{key: mEtcdCPU, label: "etcd server CPU s", dir: info}

const mEtcdCPU = "etcd_cpu_s"

var e3Metrics = []metric{
	{key: runner.MCreateResPerS, label: "create res/s", dir: higher, headline: true},
	{key: runner.MUpdateResPerS, label: "update res/s", dir: higher, headline: true},
	{key: mPeakRSS, label: "peak RSS MiB (rusage)", dir: lower},
	etcdCPU,
}

// w7FanOutMetrics: W7's remote watch fan-out (the writer local, the
// watchers remote); allocations are the whole process's (the server and
// the clients run in it).
var w7FanOutMetrics = []metric{
	{key: runner.MOpsPerS, label: "writer ops/s", dir: higher, headline: true},
	{key: runner.MP99Us, label: "p99 delivery delay µs", dir: lower, headline: true},
	{key: runner.MP50Us, label: "p50 delivery delay µs", dir: lower},
	{key: runner.MDrainMs, label: "drain ms (all final, remote)", dir: lower, headline: true},
	{key: runner.MAllocsPerOp, label: "allocs/op (server+clients)", dir: lower, headline: true},
	{key: runner.MBytesPerOp, label: "bytes/op (server+clients)", dir: lower},
	{key: runner.MEventsFrac, label: "events delivered frac", dir: info},
	{key: runner.MComplete, label: "watchers complete", dir: info},
	peakRSS,
}

// w7ListMetrics: W7's remote List and Get.
var w7ListMetrics = []metric{
	{key: runner.MListMs, label: "remote List ms (median)", dir: lower, headline: true},
	{key: runner.MListAllocs, label: "allocs per List (server+client)", dir: lower, headline: true},
	{key: runner.MGetNs, label: "remote Get ns", dir: lower, headline: true},
	{key: runner.MGetAllocs, label: "allocs per Get (server+client)", dir: lower},
	peakRSS,
}

var w6Metrics = []metric{
	{key: runner.MHeapPerRes, label: "heap B/resource", dir: lower, headline: true},
	{key: runner.MObjectsPerRes, label: "live objects/resource", dir: info},
	{key: runner.MRSSPerRes, label: "RSS B/resource", dir: lower},
	peakRSS,
}

// cosiHistCap sizes COSI's history so that a watcher cannot be overrun by a
// workload that writes at most events events into one kind.
func cosiHistCap(events, override int) int {
	if override > 0 {
		return override
	}

	c := 65536
	for c < 2*events {
		c *= 2
	}

	return c
}

func itoa(i int) string { return strconv.Itoa(i) }

// w2Subs is W2's number of subscribers (the runners' default).
var w2Subs = params.DefaultW2.Subscribers

// cases lists the workload variants in the order they run.
func (p plan) cases() []kase {
	all := []string{bCOSI, bResgraph}
	withFloor := []string{bCOSI, bResgraph, bFloor}
	n1 := itoa(p.nW1)
	w2u := itoa(p.w2Updates)

	cs := []kase{
		{
			name: "W1 create+update, 0 watchers", args: []string{"-workload", params.W1, "-n", n1, "-watchers", "0"},
			backends: withFloor, metrics: w1Metrics(0),
		},
		{
			name: "W1 create+update, 8 watchers", args: []string{"-workload", params.W1, "-n", n1, "-watchers", "8"},
			backends: all, histCap: cosiHistCap(2*p.nW1, p.histCap), watchers: 8, metrics: w1Metrics(8),
		},
	}

	for _, rate := range []int{2000, 10000} {
		cs = append(cs, kase{
			paced:    time.Duration(float64(p.w2Updates) / float64(rate) * float64(time.Second)),
			name:     fmt.Sprintf("W2 fan-out 64, %d upd/s", rate),
			args:     []string{"-workload", params.W2, "-updates", w2u, "-rate", itoa(rate)},
			backends: all, histCap: cosiHistCap(p.w2Updates+100, p.histCap), watchers: w2Subs, metrics: w2Metrics(true),
		})
	}

	cs = append(cs, kase{
		name: "W2 fan-out 64, unpaced", args: []string{"-workload", params.W2, "-updates", w2u, "-rate", "0"},
		backends: all, histCap: cosiHistCap(p.w2Updates+100, p.histCap), watchers: w2Subs, metrics: w2Metrics(false),
	})

	for _, n := range p.nChain {
		// qtransform adds a finalizer to each input: 3 events per resource and kind.
		hc := cosiHistCap(3*n, p.histCap)

		cs = append(cs, kase{
			name: fmt.Sprintf("W3 transform chain, N=%d", n), args: []string{"-workload", params.W3, "-n", itoa(n)},
			backends: withFloor, histCap: hc, metrics: chainMetrics,
		})

		for _, c := range []int{1, 4} {
			cs = append(cs, kase{
				name:     fmt.Sprintf("W4 qtransform c=%d, N=%d", c, n),
				args:     []string{"-workload", params.W4, "-n", itoa(n), "-conc", itoa(c)},
				backends: all, histCap: hc, metrics: chainMetrics,
			})
		}
	}

	nr := itoa(p.nRead)

	cs = append(cs,
		kase{
			name: fmt.Sprintf("W5 List/Get, N=%d", p.nRead), args: []string{"-workload", params.W5, "-n", nr},
			backends: withFloor, metrics: w5Metrics,
		},
		kase{
			name: fmt.Sprintf("W6 memory, N=%d", p.nRead), args: []string{"-workload", params.W6, "-n", nr},
			backends: withFloor, metrics: w6Metrics,
		},
	)

	// W7: the state over gRPC on loopback (each library's server and client).
	w7 := params.DefaultW7

	cs = append(cs,
		kase{
			name:     fmt.Sprintf("W7 remote fan-out %d, N=%d", w7.W1.Watchers, p.nW1),
			args:     []string{"-workload", params.W7, "-part", params.W7FanOut, "-n", n1, "-watchers", itoa(w7.W1.Watchers)},
			backends: all, histCap: cosiHistCap(2*p.nW1, p.histCap), watchers: w7.W1.Watchers, metrics: w7FanOutMetrics,
			remote: true,
		},
		kase{
			name:     fmt.Sprintf("W7 remote List/Get, N=%d", w7.W5.N),
			args:     []string{"-workload", params.W7, "-part", params.W7List, "-n", itoa(w7.W5.N)},
			backends: all, metrics: w7ListMetrics, remote: true,
		},
	)

	// The etcd workloads (run only when -only names them).
	for _, w := range []int{0, 4} {
		cs = append(cs, kase{
			name:     fmt.Sprintf("E1 etcd W1 N=%d, %d watchers", p.nE1, w),
			args:     []string{"-workload", params.E1, "-n", itoa(p.nE1), "-watchers", itoa(w)},
			backends: withFloor, watchers: w, etcd: true, metrics: e1Metrics(w),
		})
	}

	for _, n := range p.nE3 {
		cs = append(cs, kase{
			name: fmt.Sprintf("E3 etcd transform chain, N=%d", n), args: []string{"-workload", params.E3, "-n", itoa(n)},
			backends: all, etcd: true, metrics: e3Metrics,
		})
	}

	if !p.findings {
		return cs
	}

	// COSI with its default history (100 events per kind): whether watchers
	// (and the controller runtime) are cut off. Findings, not errors.
	findingMetrics := []metric{
		{key: runner.MCut, label: "watchers cut off"},
		{key: runner.MComplete, label: "watchers complete"},
		{key: runner.MEventsFrac, label: "events delivered frac"},
		{key: runner.MDeliveredFrac, label: "updates delivered frac"},
		{key: runner.MOpsPerS, label: "writer ops/s"},
		{key: runner.MUpdPerS, label: "writer upd/s"},
		{key: runner.MP99Us, label: "p99 delay µs"},
	}

	cs = append(cs,
		kase{
			name: "COSI defaults: W1, 8 watchers", args: []string{"-workload", params.W1, "-n", n1, "-watchers", "8"},
			backends: []string{bCOSI}, finding: true, metrics: findingMetrics,
		},
		kase{
			name: "COSI defaults: W2 unpaced", args: []string{"-workload", params.W2, "-updates", w2u, "-rate", "0"},
			backends: []string{bCOSI}, finding: true, metrics: findingMetrics,
		},
		kase{
			name: "COSI defaults: W2 10000 upd/s", args: []string{"-workload", params.W2, "-updates", w2u, "-rate", "10000"},
			backends: []string{bCOSI}, finding: true, metrics: findingMetrics,
		},
		kase{
			name:     fmt.Sprintf("COSI defaults: W3 N=%d", p.nChain[0]),
			args:     []string{"-workload", params.W3, "-n", itoa(p.nChain[0])},
			backends: []string{bCOSI}, finding: true,
			metrics: []metric{{key: runner.MCreateResPerS, label: "create res/s"}, {key: runner.MUpdateResPerS, label: "update res/s"}},
		},
	)

	return cs
}
