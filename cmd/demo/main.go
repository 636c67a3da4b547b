// Command demo is a small network configuration agent built on resgraph,
// runnable in one command:
//
//	go run ./cmd/demo --duration 10s
//
// The user's intent (links with MTU, addresses, gateway, static routes and
// DNS servers, from a JSON file; a sample is built in) becomes LinkSpec
// resources. Controllers configure each link in a simulated kernel whose
// carriers flap, report LinkStatus, derive AddressSpec and RouteSpec
// resources for the links that are up, and aggregate every link's DNS
// servers into one ResolverConfig. Half-way through the run the demo
// deletes a link, and the log shows its routes, addresses, status and spec
// going away in that order.
//
// Commands:
//
//	demo [run] [flags]          run the agent (see demo run -h)
//	demo graph --format F       print the controller/resource graph: dot, mermaid or json
//	demo apply FILE             validate an intent file and print what it would create
//	demo apply --plan [--current CURRENT] FILE
//	                            plan the change from the intent CURRENT to FILE
//	demo explain --addr A resource NS/TYPE/ID | controller NAME
//	                            ask a running agent why (its /debug/explain)
//	demo help [COMMAND]         print the usage (-h and --help too)
//
// The agent serves its API — its state, the explanations, the graph and its
// health, what resgraphctl talks to — on a unix socket in its data
// directory (--data-dir; --api-socket PATH or none to move or disable it).
//
// With --debug-socket PATH (peer credentials) or --debug-addr HOST:PORT
// (mutual TLS: --debug-cert, --debug-key, --debug-client-ca) the agent
// serves the debug pages of package debughttp — /debug/vars (expvar),
// /debug/pprof/, /debug/graph, /debug/controllers, /debug/explain,
// /debug/recording/ — each page decided by the API's rules (--rules).
// --debug-insecure serves a loopback --debug-addr without authentication,
// --debug-allow-remote any address; both are logged as warnings.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/resgraph/resgraph/cmd/demo/internal/cli"
)

func main() {
	os.Exit(mainWithExit(os.Args[1:], os.Stdout, os.Stderr))
}

// mainWithExit runs the command line args and returns the exit code: 0 on
// success, 1 on failure, 2 on a usage error.
func mainWithExit(args []string, stdout, stderr io.Writer) int {
	cmd, err := cli.Parse(args, stdout, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		_, _ = fmt.Fprintln(stderr, "demo:", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch cmd.Name {
	case cli.CmdGraph:
		err = printGraph(stdout, cmd.GraphFormat)
	case cli.CmdApply:
		if cmd.Plan {
			err = planCmd(ctx, stdout, cmd.ApplyFile, cmd.Current)
		} else {
			err = dryRun(stdout, cmd.ApplyFile)
		}
	case cli.CmdExplain:
		err = explainCmd(ctx, stdout, cmd.Explain)
	default:
		err = run(ctx, cmd.Run, stdout)
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}
