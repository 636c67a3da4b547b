package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/resgraph/resgraph/pkg/notify"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// config is everything a daemon needs, resolved from the command line.
type config struct {
	// State is the state to run on (wrapped in a change log); nil means a
	// fresh in-memory state.
	State state.State
	// Intent is applied (as LinkSpecs) when the daemon starts.
	Intent *intent.Intent
	// Debug are the debug endpoint's doors (see debugdoors.go); none by
	// default.
	Debug cli.DebugOptions
	// ExpvarName is the expvar name the Runtime's metrics are published
	// under when the debug endpoint runs; "" publishes nothing.
	ExpvarName string
	// DeleteLink is the link deleted DeleteAfter after the start; ""
	// deletes none.
	DeleteLink string
	// Kernel configures the simulated kernel (its Logger is set by the
	// daemon).
	Kernel      kernel.Config
	DeleteAfter time.Duration
	Verbose     bool
	// Record is a file the flight recorder's window is written to when
	// the daemon stops ("" none); RecordDir a directory where the
	// recorder keeps the recordings it takes on its own ("" keeps them in
	// memory only, for the debug page).
	Record, RecordDir string
	// APISocket is the unix socket the API is served on (see api.go);
	// "" serves none.
	APISocket string
	// API is the API's access control and its TCP door (see api.go).
	API apiConfig
}

// daemon is the agent: a state that logs every change of a demo resource,
// a simulated kernel, a Runtime with the agent's controllers, and
// optionally the debug endpoint. Build it with newDaemon, run it once with Run.
type daemon struct {
	cfg    config
	logger *zap.Logger
	state  state.State
	kernel *kernel.Kernel
	engine *runtime.Runtime
	// recorder is the daemon's flight recorder (package recording), on
	// whenever the daemon runs; codec encodes its recordings.
	recorder *recording.Recorder
	codec    *codec.Registry
	// ready is closed by Run once the debug endpoint listens, the intent
	// is applied and every goroutine is started.
	ready chan struct{}
	// debugAddr is the debug endpoint's TCP address (--debug-addr);
	// written by Run before it closes ready and read only after ready is
	// closed.
	debugAddr net.Addr
	// apiAddrs are the API's addresses (the unix socket, then the TCP
	// one); written by Run before it closes ready.
	apiAddrs []net.Addr
}

// newDaemon builds a daemon logging to out. It starts nothing.
func newDaemon(cfg config, out io.Writer) (*daemon, error) {
	logger := newLogger(out, cfg.Verbose)
	inner := cfg.State
	if inner == nil {
		inner = inmem.NewState()
	}
	st := newChangeLog(inner, logger.Named("state"))
	kcfg := cfg.Kernel
	kcfg.Logger = logger.Named("kernel")
	var rec *recording.Recorder
	kcfg.OnCarrier = func(name string, up bool) { rec.Act(kernel.CarrierAction(name, up)) }
	kcfg.OnRead = func(links []kernel.Link) { rec.Observe(kernel.LinksRead, kernel.EncodeLinks(links)) }
	k := kernel.New(kcfg)
	engine, err := runtime.New(st, logger.Named("runtime"), controllers.Options()...)
	if err != nil {
		return nil, err
	}
	if err := controllers.Register(engine, k); err != nil {
		return nil, err
	}
	reg := netres.Codec()
	rec, err = recording.New(st, reg, recording.WithRuntime(engine), recording.WithSource("resgraph demo"),
		recording.WithReplayCommand(replayCommand), recording.WithKeep(cfg.RecordDir, 0), recording.WithLogger(logger.Named("recorder")))
	if err != nil {
		return nil, err
	}
	return &daemon{cfg: cfg, logger: logger, state: st, kernel: k, engine: engine, recorder: rec, codec: reg, ready: make(chan struct{})}, nil
}

// replayCommand replays a recording of the demo (FILE): the agent's
// simulation scenario explores around it.
const replayCommand = "go test ./cmd/demo/internal/controllers -run '^TestSimulation$' -count=1 -v -sim.recording=FILE"

// Run runs the daemon until ctx is done and returns after every goroutine
// it started has exited: nil after a cancel, the first failure otherwise.
func (d *daemon) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	fail := func(err error) error {
		cancel()
		return errors.Join(err, g.Wait())
	}

	// Every door's rules and certificates are loaded before any door
	// listens: a bad flag fails here, with nothing served.
	doors, err := d.openDoors()
	if err != nil {
		return err
	}
	defer func() { _ = doors.closeAudit() }() // after g.Wait: the audit log outlives every request
	if err := d.startDebug(gctx, g, doors); err != nil {
		return fail(fmt.Errorf("debug endpoint: %w", err))
	}
	if err := d.startAPI(gctx, g, doors); err != nil {
		return fail(fmt.Errorf("API: %w", err))
	}

	// The recording starts before the intent is applied (its writes are
	// the recording's first changes), and the Runtime after it (its first
	// listing holds the intent: readiness waits for the intent's links).
	// The recorder is attached to the Runtime before it runs
	// (recording.Recorder.Attach): it hands each kind over to the
	// Runtime's watches once the Runtime listed it, missing nothing.
	if err := d.recorder.Attach(gctx); err != nil {
		return fail(fmt.Errorf("recorder: %w", err))
	}
	g.Go(func() error { return d.recorder.Run(gctx) })
	select {
	case <-d.recorder.Started():
	case <-gctx.Done():
		return fail(gctx.Err())
	}

	if d.cfg.Intent != nil {
		// Modify: a configuration kept across runs (--config-db) has
		// the links already; each is brought to the intent.
		for _, l := range d.cfg.Intent.Links {
			err := d.state.Modify(gctx, netres.NewLinkSpec(l.Name), func(r resource.Resource) error {
				*r.(*netres.LinkSpec).TypedSpec() = l.Spec
				return nil
			})
			if err != nil {
				return fail(fmt.Errorf("apply intent %s: %w", d.cfg.Intent.File, err))
			}
		}
	}

	g.Go(func() error { return d.kernel.Run(gctx) })
	g.Go(func() error { return d.engine.Run(gctx) })
	// systemd's notify protocol, under Type=notify: READY=1 once every
	// controller caught up, WATCHDOG=1 while the Runtime is live,
	// STOPPING=1 when the daemon begins to stop (nothing without
	// $NOTIFY_SOCKET). A socket it cannot reach is logged, and the agent
	// goes on.
	g.Go(func() error {
		if err := notify.Serve(gctx, d.engine.Observe()); err != nil {
			d.logger.Warn("systemd notification failed", zap.Error(err))
		}
		return nil
	})
	if d.cfg.DeleteLink != "" {
		g.Go(func() error { return d.deleteLinkLater(gctx) })
	}
	close(d.ready)
	err = g.Wait()
	if d.cfg.Record != "" {
		err = errors.Join(err, d.writeRecording())
	}
	return err
}

// writeRecording writes the flight recorder's window to cfg.Record.
func (d *daemon) writeRecording() error {
	rec, err := d.recorder.Take()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := recording.WriteFile(d.cfg.Record, rec, d.codec); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	abs, err := filepath.Abs(d.cfg.Record) // go test runs the replay in the package's directory
	if err != nil {
		abs = d.cfg.Record
	}
	d.logger.Info(fmt.Sprintf("flight recorder: %d changes over %v written to %s; replay: %s", len(rec.Changes),
		rec.Duration().Round(time.Millisecond), d.cfg.Record, strings.ReplaceAll(rec.Replay, "FILE", abs)))
	return nil
}

// deleteLinkLater deletes cfg.DeleteLink after cfg.DeleteAfter, the way a
// user would: TeardownAndDestroy of its LinkSpec, which returns once every
// controller released it.
func (d *daemon) deleteLinkLater(ctx context.Context) error {
	t := time.NewTimer(d.cfg.DeleteAfter)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
	name := d.cfg.DeleteLink
	log := d.logger.Named("user")
	log.Info("deleting link " + name + ": its routes, then its addresses, then its status go before its LinkSpec")
	start := time.Now()
	err := d.state.TeardownAndDestroy(ctx, resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, name))
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil:
		return fmt.Errorf("delete link %s: %w", name, err)
	}
	log.Info("link "+name+" deleted", zap.Duration("took", time.Since(start).Round(time.Millisecond)))
	return nil
}

// Ready is closed once Run has started everything.
func (d *daemon) Ready() <-chan struct{} { return d.ready }

// DebugAddr returns the debug endpoint's TCP address (nil without one);
// call it only after Ready is closed.
func (d *daemon) DebugAddr() net.Addr { return d.debugAddr }
