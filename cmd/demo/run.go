package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// expvarName is the expvar variable the Runtime's metrics are published
// under by the run command.
const expvarName = "resgraph"

// run is the run command: it applies the intent, runs the agent until ctx
// is done or opts.Duration passed, and prints the final state. An invalid
// intent file fails before anything runs or is written.
func run(ctx context.Context, opts cli.RunOptions, stdout io.Writer) (err error) {
	in, err := loadIntent(opts.ApplyFile)
	if err != nil {
		return err
	}
	cfg, err := configFor(opts, in)
	if err != nil {
		return err
	}
	if opts.ConfigDB != "" {
		st, closeStore, err := openStore(ctx, opts.ConfigDB, opts.KeysFile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, closeStore()) }()
		cfg.State = st
	}
	d, err := newDaemon(cfg, stdout)
	if err != nil {
		return err
	}
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Duration)
		defer cancel()
	}
	d.logger.Info(banner(opts, cfg))
	start := time.Now()
	if err := d.Run(ctx); err != nil {
		return err
	}
	d.logger.Info(fmt.Sprintf("stopped after %s; final state:", time.Since(start).Round(time.Millisecond)))
	return printState(context.WithoutCancel(ctx), d, stdout)
}

// configFor resolves the run options against the intent.
func configFor(opts cli.RunOptions, in *intent.Intent) (config, error) {
	cfg := config{
		Intent:      in,
		Debug:       opts.Debug,
		ExpvarName:  expvarName,
		DeleteAfter: opts.DeleteDelay(),
		Verbose:     opts.Verbose,
		Record:      opts.Record,
		RecordDir:   opts.RecordDir,
		APISocket:   opts.APISocket,
		API:         apiConfigFor(opts),
		Kernel:      kernel.Config{FailFirst: opts.ApplyFailures, Latency: opts.KernelLatency, FlapMin: opts.FlapMin, FlapMax: opts.FlapMax, Seed: opts.Seed},
	}
	switch opts.DeleteLink {
	case cli.NoDelete:
	case "":
		if n := len(in.Links); n > 0 {
			cfg.DeleteLink = in.Links[n-1].Name
		}
	default:
		if !slices.ContainsFunc(in.Links, func(l intent.Link) bool { return l.Name == opts.DeleteLink }) {
			return config{}, fmt.Errorf("--delete-link %s: %s has no such link", opts.DeleteLink, in.File)
		}
		cfg.DeleteLink = opts.DeleteLink
	}
	return cfg, nil
}

func banner(opts cli.RunOptions, cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resgraph demo: %d controllers, %d links from %s, seed %d", len(controllers.Names()), len(cfg.Intent.Links), cfg.Intent.File, opts.Seed)
	if opts.FlapMin > 0 {
		fmt.Fprintf(&b, ", carriers flap every %s-%s", opts.FlapMin, opts.FlapMax)
	}
	if opts.ApplyFailures > 0 {
		fmt.Fprintf(&b, ", the kernel refuses each new link %d time(s)", opts.ApplyFailures)
	}
	if cfg.DeleteLink != "" {
		fmt.Fprintf(&b, ", %s is deleted after %s", cfg.DeleteLink, cfg.DeleteAfter)
	}
	if opts.Duration > 0 {
		fmt.Fprintf(&b, ", stopping after %s", opts.Duration)
	} else {
		b.WriteString(", Ctrl-C stops")
	}
	return b.String()
}

// printState prints every demo resource, kind by kind.
func printState(ctx context.Context, d *daemon, w io.Writer) error {
	for _, k := range netres.Kinds() {
		l, err := d.state.List(ctx, k)
		if err != nil {
			return err
		}
		for _, r := range l.Items {
			if _, err := fmt.Fprintf(w, "  %-44s %s%s\n", netres.Describe(r.Metadata()), specString(r), phaseSuffix(r)); err != nil {
				return err
			}
		}
	}
	return nil
}

func phaseSuffix(r resource.Resource) string {
	if r.Metadata().Phase() == resource.PhaseRunning {
		return ""
	}
	return " (" + phaseString(r.Metadata().Phase()) + ")"
}
