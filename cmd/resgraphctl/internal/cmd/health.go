package cmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	obsremote "github.com/resgraph/resgraph/pkg/observe/remote"
)

func newHealth(a *app) *cobra.Command {
	var probe string
	c := &cobra.Command{
		Use:   "health",
		Short: "Print the daemon's readiness and liveness checks",
		Long: `Print every health check of the daemon — readiness (its controllers
started and caught up with their inputs) and liveness (its loops are
moving) — with what each found, and whether the daemon is ready and live.
The exit status is 1 when a check fails, so that scripts can wait on it.
Probes and load balancers ask the same checks through the standard gRPC
health protocol (grpc.health.v1, services "", "readiness", "liveness").`,
		Example: `  resgraphctl health
  until resgraphctl health --probe readiness >/dev/null; do sleep 1; done`,
		GroupID: groupDaemon,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch obsremote.Probe(probe) {
			case "", obsremote.Readiness, obsremote.Liveness:
			default:
				return usageErr(errorf("--probe %q: want readiness or liveness", probe))
			}
			return a.health(cmd.Context(), obsremote.Probe(probe))
		},
	}
	c.Flags().StringVar(&probe, "probe", "", "print only the checks of one `PROBE`: readiness or liveness")
	_ = c.RegisterFlagCompletionFunc("probe", cobra.FixedCompletions([]string{"readiness", "liveness"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func (a *app) health(ctx context.Context, probe obsremote.Probe) error {
	obs, err := a.observer()
	if err != nil {
		return err
	}
	ctx, cancel := a.request(ctx)
	defer cancel()
	checks, err := obs.Health(ctx)
	if err != nil {
		return err
	}
	rows := [][]string{{"PROBE", "CHECK", "STATUS", "MESSAGE"}}
	failing := 0
	for _, c := range checks {
		if probe != "" && c.Probe != probe {
			continue
		}
		st := "ok"
		if !c.OK {
			st, failing = "FAILING", failing+1
		}
		rows = append(rows, []string{string(c.Probe), c.Name, st, c.Message})
	}
	if err := writeTable(a.stdout, rows); err != nil {
		return err
	}
	for _, p := range []obsremote.Probe{obsremote.Readiness, obsremote.Liveness} {
		if probe == "" || probe == p {
			_, _ = fmt.Fprintf(a.stdout, "%s: %s\n", p, yesNo(obsremote.Passing(checks, p)))
		}
	}
	if failing > 0 {
		return fmt.Errorf("%d health check(s) failing", failing)
	}
	return nil
}

func yesNo(ok bool) string {
	if ok {
		return "passing"
	}
	return "FAILING"
}

// writeTable writes rows with columns three spaces apart.
func writeTable(w io.Writer, rows [][]string) error {
	_, err := printer.WriteRows(w, rows, nil)
	return err
}
