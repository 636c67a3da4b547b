package cmd

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
)

func newExplain(a *app) *cobra.Command {
	var ns, output string
	c := &cobra.Command{
		Use:   "explain (TYPE ID | TYPE/ID | resource NAMESPACE/TYPE/ID | controller NAME)",
		Short: "Ask the daemon why a resource or a controller is as it is",
		Long: `Ask the daemon why a resource is as it is — who writes it, who reads it,
its last changes with the reconciles each caused, what each of those
controllers is doing about it now — or, with "controller NAME", what a
controller is doing, its inputs and outputs, counters, latencies and last
reconciles. A resource that does not exist is explained too: who would
write it, and what it waits for. "resource NAMESPACE/TYPE/ID" names it as
the debug pages (/debug/explain?resource=) and "demo explain" do.`,
		Example: `  resgraphctl explain linkstatus eth0
  resgraphctl explain linkspec/eth1
  resgraphctl explain resource network/LinkStatuses.net.resgraph.dev/eth0
  resgraphctl explain controller LinkApplyController -o json`,
		GroupID:           groupDaemon,
		Args:              rangeArgs(1, 2),
		ValidArgsFunction: a.completeExplain,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "json" {
				return usageErr(errorf("-o %q: want text or json", output))
			}
			return a.explain(cmd.Context(), args, ns, output == "json")
		},
	}
	c.Flags().StringVarP(&ns, "namespace", "n", "", "the resource's `NAMESPACE` (default: its type's)")
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func (a *app) explain(ctx context.Context, args []string, ns string, asJSON bool) error {
	obs, err := a.observer()
	if err != nil {
		return err
	}
	rctx, cancel := a.request(ctx)
	defer cancel()
	var x any
	switch {
	case args[0] == "controller" && len(args) == 2:
		if x, err = obs.ExplainController(rctx, args[1]); err != nil {
			return a.noController(rctx, err)
		}
	default:
		named, typeName, id, err := resourceArgs(args)
		if err != nil {
			return err
		}
		if named != "" && ns != "" && named != ns {
			return usageErr(errorf("explain resource %s: -n %s names another namespace", args[1], ns))
		}
		kind, _, err := a.kind(ctx, typeName, cmp.Or(named, ns))
		if err != nil {
			return err
		}
		if x, err = obs.Explain(rctx, resource.NewPointer(kind.Namespace(), kind.Type(), id)); err != nil {
			return err
		}
	}
	if asJSON {
		out, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(append(out, '\n'))
		return err
	}
	return explain.WriteText(a.stdout, x)
}

// resourceArgs reads "TYPE ID", "TYPE/ID" or "resource NAMESPACE/TYPE/ID"
// (ns is then the namespace it names).
func resourceArgs(args []string) (ns, typeName, id string, err error) {
	if len(args) == 2 && args[0] == "resource" {
		parts := strings.SplitN(args[1], "/", 3)
		if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
			return "", "", "", usageErr(errorf("explain resource %q: want NAMESPACE/TYPE/ID", args[1]))
		}
		return parts[0], parts[1], parts[2], nil
	}
	if len(args) == 2 {
		return "", args[0], args[1], nil
	}
	typeName, id, ok := strings.Cut(args[0], "/")
	if !ok || typeName == "" || id == "" {
		return "", "", "", usageErr(errorf("explain %q: want TYPE ID, TYPE/ID, resource NAMESPACE/TYPE/ID or controller NAME", args[0]))
	}
	return "", typeName, id, nil
}

// noController adds to the daemon's "no controller" error the names of
// the controllers it runs (those of its graph, as completion lists them).
func (a *app) noController(ctx context.Context, err error) error {
	if status.Code(err) != codes.NotFound {
		return err
	}
	names, _ := a.completeControllers(ctx)
	if len(names) == 0 {
		return err
	}
	return errorf("%s: the daemon runs %s", a.message(err), strings.Join(names, ", "))
}
