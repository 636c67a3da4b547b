package notify_test

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/resgraph/resgraph/pkg/notify"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// A daemon's whole life under systemd (Type=notify, WatchdogSec=): SIGTERM
// cancels ctx; Run returns once every controller stopped; Serve has sent
// READY=1 once the controllers caught up, WATCHDOG=1 while the Runtime
// was live, and STOPPING=1 when ctx was canceled; then the state is
// closed (a persistent state's Close goes there).
func ExampleServe() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	st := inmem.NewState()
	rt, err := runtime.New(st, zap.NewNop())
	if err != nil {
		log.Fatal(err)
	}
	// ... register the controllers ...
	var g errgroup.Group
	g.Go(func() error { return rt.Run(ctx) })
	g.Go(func() error { return notify.Serve(ctx, rt.Observe()) })
	if err := g.Wait(); err != nil {
		log.Fatal(err)
	}
}
