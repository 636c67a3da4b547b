// Package runner is the child side of the comparison: one process runs one
// workload on one backend and prints one JSON line (a Result) on stdout.
//
// Each backend's cmd/run is a few lines that hand its workload functions to
// Main; the flags, the output format and the metric names are defined here
// once, so every backend is driven and read the same way.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/resgraph/resgraph/bench/common/measure"
	"github.com/resgraph/resgraph/bench/common/params"
)

// Options are backend settings that are not workload parameters.
type Options struct {
	// HistCap is the COSI inmem history max capacity (inmem.WithHistoryMaxCapacity);
	// 0 keeps COSI's default (100 events per kind). Other backends refuse a
	// non-zero value: resgraph always runs with its default options.
	HistCap int

	// Etcd is the client endpoint (host:port) of the etcd the E workloads
	// run on; the driver starts a fresh etcd for each run.
	Etcd string
}

// Report collects a run's metrics and a description of its configuration.
type Report struct {
	Metrics map[string]float64
	Config  map[string]string
}

// Set records a metric.
func (r *Report) Set(key string, v float64) { r.Metrics[key] = v }

// Note records a configuration fact (which options the library ran with).
func (r *Report) Note(key, v string) { r.Config[key] = v }

// Backend is what a backend's cmd/run hands to Main. A nil workload is
// reported as not applicable.
type Backend struct {
	Name  string
	W1    func(context.Context, params.W1Params, Options, *Report) error
	W2    func(context.Context, params.W2Params, Options, *Report) error
	Chain func(context.Context, params.ChainParams, Options, *Report) error // W3 and W4
	W5    func(context.Context, params.W5Params, Options, *Report) error
	W6    func(context.Context, params.W6Params, Options, *Report) error
	W7    func(context.Context, params.W7Params, Options, *Report) error // the state over gRPC

	// E1 is W1 on etcd (Options.Etcd); E3 is W3 (transform chain) on etcd.
	E1 func(context.Context, params.W1Params, Options, *Report) error
	E3 func(context.Context, params.ChainParams, Options, *Report) error
}

// Result is the JSON line a child prints.
type Result struct {
	Backend  string             `json:"backend"`
	Workload string             `json:"workload"`
	Args     []string           `json:"args"`
	Config   map[string]string  `json:"config,omitempty"`
	Metrics  map[string]float64 `json:"metrics"`
	Error    string             `json:"error,omitempty"`
	Seconds  float64            `json:"seconds"`
}

// ErrNotApplicable is returned for a workload a backend does not run.
var ErrNotApplicable = errors.New("workload not applicable to this backend")

// Main parses args (without the program name), runs one workload, prints
// its Result as one JSON line on stdout and exits (status 1 on error).
func Main(b Backend, args []string) {
	res := Run(b, args)

	line, err := json.Marshal(res)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		os.Exit(2)
	}

	fmt.Println(string(line))

	if res.Error != "" {
		fmt.Fprintln(os.Stderr, "error:", res.Error)
		os.Exit(1)
	}
}

// Run parses args, runs one workload and returns its Result.
func Run(b Backend, args []string) Result {
	res := Result{Backend: b.Name, Args: args, Metrics: map[string]float64{}}

	fs := flag.NewFlagSet(b.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)

	var (
		workload = fs.String("workload", "", "W1 .. W7, E1, E3")
		part     = fs.String("part", params.W7FanOut, "W7: fanout (remote watchers under the W1 writer) or list (remote List/Get)")
		n        = fs.Int("n", 0, "resources (0: the workload's default)")
		opts     Options
		w1       = params.DefaultW1
		e1       = params.DefaultE1
		w2       = params.DefaultW2
		chain    = params.DefaultChain
		w5       = params.DefaultW5
	)

	fs.IntVar(&opts.HistCap, "histcap", 0, "COSI inmem history max capacity (0: COSI default)")
	fs.StringVar(&opts.Etcd, "etcd", "", "E1/E3: etcd client endpoint host:port")
	fs.IntVar(&w1.Watchers, "watchers", w1.Watchers, "W1/E1: WatchKind watchers")
	fs.IntVar(&w1.ChanBuf, "chanbuf", w1.ChanBuf, "W1/W2/E1: watcher channel buffer")
	fs.IntVar(&w2.Subscribers, "subs", w2.Subscribers, "W2: WatchKind subscribers")
	fs.IntVar(&w2.Updates, "updates", w2.Updates, "W2: updates issued")
	fs.IntVar(&w2.Resources, "resources", w2.Resources, "W2: resources updated round-robin")
	fs.Float64Var(&w2.Rate, "rate", w2.Rate, "W2: updates/s (0: unpaced)")
	fs.UintVar(&chain.Concurrency, "conc", chain.Concurrency, "W4: qtransform concurrency (0: library default)")
	fs.IntVar(&chain.UpdateValue, "update-value", chain.UpdateValue, "W3/W4: value written in the update phase")
	fs.DurationVar(&chain.Warmup, "warmup", chain.Warmup, "W3/W4: untimed wait after the runtime starts")
	timeout := fs.Duration("timeout", params.DefaultTimeout, "W1/W2: wait for the watchers after the writes; W3/W4: the whole run")
	fs.IntVar(&w5.Lists, "lists", w5.Lists, "W5: full-kind Lists")
	fs.IntVar(&w5.Gets, "gets", w5.Gets, "W5: random Gets")
	fs.Uint64Var(&w5.Seed, "seed", w5.Seed, "W5: PCG seed")

	if err := fs.Parse(args); err != nil {
		res.Error = "flags: " + err.Error()

		return res
	}

	w1.Timeout, w2.Timeout, chain.Timeout = *timeout, *timeout, *timeout
	e1.Watchers, e1.ChanBuf, e1.Timeout = w1.Watchers, max(w1.ChanBuf, 1), *timeout
	res.Workload = strings.ToUpper(*workload)
	rep := &Report{Metrics: res.Metrics, Config: map[string]string{}}
	ctx := context.Background()
	start := time.Now()

	var err error

	switch res.Workload {
	case params.W1:
		w1.ChanBuf = max(w1.ChanBuf, 1)
		err = call(ctx, b.W1, withN(w1, *n, func(p *params.W1Params, n int) { p.N = n }), opts, rep)
	case params.W2:
		w2.ChanBuf = max(w2.ChanBuf, 1)
		err = call(ctx, b.W2, w2, opts, rep)
	case params.W3, params.W4:
		chain.Mode = params.ModeTransform
		if res.Workload == params.W4 {
			chain.Mode = params.ModeQTransform
		}

		err = call(ctx, b.Chain, withN(chain, *n, func(p *params.ChainParams, n int) { p.N = n }), opts, rep)
	case params.W5:
		err = call(ctx, b.W5, withN(w5, *n, func(p *params.W5Params, n int) { p.N = n }), opts, rep)
	case params.W6:
		err = call(ctx, b.W6, withN(params.DefaultW6, *n, func(p *params.W6Params, n int) { p.N = n }), opts, rep)
	case params.W7:
		w7 := params.DefaultW7
		w7.Part = *part
		w7.W1.Watchers, w7.W1.ChanBuf, w7.W1.Timeout = w1.Watchers, max(w1.ChanBuf, 1), *timeout

		if *n > 0 {
			w7.W1.N, w7.W5.N = *n, *n
		}

		err = call(ctx, b.W7, w7, opts, rep)
	case params.E1, params.E3:
		if opts.Etcd == "" {
			err = errors.New("-etcd host:port is required for the etcd workloads")

			break
		}

		if res.Workload == params.E1 {
			err = call(ctx, b.E1, withN(e1, *n, func(p *params.W1Params, n int) { p.N = n }), opts, rep)

			break
		}

		chain.Mode = params.ModeTransform
		err = call(ctx, b.E3, withN(chain, *n, func(p *params.ChainParams, n int) { p.N = n }), opts, rep)
	default:
		err = fmt.Errorf("unknown workload %q", *workload)
	}

	res.Seconds = time.Since(start).Seconds()
	rep.Set(MVmHWM, float64(measure.PeakRSS())/(1<<20))

	if len(rep.Config) > 0 {
		res.Config = rep.Config
	}

	if err != nil {
		res.Error = err.Error()
	}

	return res
}

func withN[P any](p P, n int, set func(*P, int)) P {
	if n > 0 {
		set(&p, n)
	}

	return p
}

func call[P any](ctx context.Context, f func(context.Context, P, Options, *Report) error, p P, o Options, r *Report) error {
	if f == nil {
		return ErrNotApplicable
	}

	return f(ctx, p, o, r)
}
