package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/endpoint"
)

// Command groups of the help text.
const (
	groupResources = "resources"
	groupDaemon    = "daemon"
)

// commands are resgraphctl's commands, each made by its file's
// constructor. A new command is one more file and one more line here
// (see the package documentation).
var commands = []func(*app) *cobra.Command{
	newGet, newDescribe, newCreate, newApply, newDelete, newTypes,
	newExplain, newGraph, newHealth, newRecord, newReplay, newPlan,
}

// newRoot returns the root command with every command under it.
func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "resgraphctl",
		Short: "Talk to a running resgraph daemon",
		Long: `resgraphctl talks to a running resgraph daemon (the demo agent, or any daemon
that serves resgraph's API): it reads, watches and writes the daemon's
resources, of any type the daemon knows, and asks it why a resource or a
controller is as it is.

The daemon is found at --endpoint: a unix socket path, or HOST:PORT. Without
it, resgraphctl uses $RESGRAPH_ENDPOINT, else the demo's socket
(` + endpoint.DemoSocket() + ` here). On a unix socket the daemon knows you by
your uid and groups; on HOST:PORT by your client certificate
(--client-certificate, --client-key, --certificate-authority: mutual TLS).
What you may do is the daemon's access rules' to say: a denial names your
identity, the verb and the resource.

Types are named by their type or any alias, in any case ("linkstatuses",
"LinkStatus", "LinkStatuses.net.resgraph.dev"); resgraphctl types lists them.`,
		Example: `  resgraphctl get linkstatuses -w
  resgraphctl describe linkspec eth0
  resgraphctl health`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().StringVar(&a.endpoint, "endpoint", endpoint.Default(), "the daemon's API: a unix socket `PATH` or HOST:PORT")
	root.PersistentFlags().StringVar(&a.tls.Cert, "client-certificate", "", "with a HOST:PORT --endpoint, present this certificate `FILE` (PEM; mutual TLS): the daemon knows you by it")
	root.PersistentFlags().StringVar(&a.tls.Key, "client-key", "", "the key `FILE` (PEM) of --client-certificate")
	root.PersistentFlags().StringVar(&a.tls.CA, "certificate-authority", "", "verify the daemon's certificate against the CAs in this `FILE` (PEM)")
	root.PersistentFlags().DurationVar(&a.requestTimeout, "request-timeout", 30*time.Second, "give up on a request to the daemon after this long")
	root.AddGroup(&cobra.Group{ID: groupResources, Title: "Resources:"}, &cobra.Group{ID: groupDaemon, Title: "The daemon:"})
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })
	for _, newCmd := range commands {
		root.AddCommand(newCmd(a))
	}
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		a.ran = true
		if a.requestTimeout <= 0 {
			return usageErr(errorf("--request-timeout must be positive, got %s", a.requestTimeout))
		}
		return nil
	}
	return root
}

// Main runs resgraphctl with args (without the program's name) and
// returns its exit code: 0 on success, 1 when the command failed, 2 for a
// wrong command line. Errors are one line on stderr.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	defer a.close()
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var usage *usageError
	if !a.ran || errors.As(err, &usage) {
		_, _ = fmt.Fprintf(stderr, "resgraphctl: %s\n", a.message(err))
		_, _ = fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", commandPath(root, args))
		return 2
	}
	if !errors.Is(err, errPrinted) {
		_, _ = fmt.Fprintf(stderr, "resgraphctl: %s\n", a.message(err))
	}
	return 1
}

// commandPath names the command args called, for the usage hint.
func commandPath(root *cobra.Command, args []string) string {
	c, _, err := root.Find(args)
	if err != nil {
		return root.Name()
	}
	return c.CommandPath()
}

// rangeArgs is cobra.RangeArgs with a usage error naming the command's
// synopsis.
func rangeArgs(minimum, maximum int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < minimum || len(args) > maximum {
			want := "no argument"
			if _, synopsis, ok := strings.Cut(cmd.Use, " "); ok {
				want = synopsis
			}
			return usageErr(errorf("%s: want %s, got %d argument(s)", cmd.Name(), want, len(args)))
		}
		return nil
	}
}
