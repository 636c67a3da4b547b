// Command resgraphctl talks to a running resgraph daemon — the demo agent
// of cmd/demo, or any daemon that serves resgraph's remote State and
// observer on its API listener: it gets, watches, describes, creates,
// applies and deletes resources of any type the daemon knows (it asks the
// daemon for their definitions, so it prints types it was never compiled
// with), explains why a resource or a controller is as it is, prints the
// dependency graph and the daemon's health.
//
//	resgraphctl get linkstatuses -w          # every change, as it comes
//	resgraphctl get linkspecs eth0 -o yaml
//	resgraphctl describe linkstatus eth0
//	resgraphctl explain controller LinkStatusController
//	resgraphctl apply -f links.yaml
//	resgraphctl delete linkspec eth1 --timeout 30s
//	resgraphctl health
//
// Without --endpoint it talks to $RESGRAPH_ENDPOINT, else to the demo's
// socket ($XDG_RUNTIME_DIR/resgraph-demo/api.sock, or
// /tmp/resgraph-demo-UID/api.sock without XDG_RUNTIME_DIR). `resgraphctl
// help` lists the commands; each command's --help says what it does.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/cmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cmd.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
