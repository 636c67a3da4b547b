package cmd

import (
	"context"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/selector"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// getOptions are the flags of get.
type getOptions struct {
	namespace     string
	selectors     []string
	output        string
	watch         bool
	showSensitive bool
}

func newGet(a *app) *cobra.Command {
	var o getOptions
	c := &cobra.Command{
		Use:   "get TYPE [ID]",
		Short: "Print resources of a type, or watch them change (-w)",
		Long: `Print the resources of a type in a namespace (the type's default namespace
unless -n names one), or the one resource ID.

A table prints the metadata and the columns the type's definition names;
-o wide adds the type, owner, labels and finalizers; -o yaml and -o json
print documents (metadata and spec) that create and apply read back. A
sensitive type's spec and columns are hidden unless --show-sensitive.

-l selects by labels: the terms of one selector, separated by commas, must
all hold ("app=web,tier!=db"); several -l select what any of them selects.
Terms: key, !key, key=value, key!=value, key in (a,b), key notin (a,b),
key<value, key<=value, key>value, key>=value (integers compare as numbers).

-w prints the resources, then every change as it comes, with its event
(existing, created, updated, destroyed), until Ctrl-C. When the connection
breaks the watch resumes where it stopped once the daemon is back, and
says so; when the daemon restarted it cannot resume without missing
changes, and resgraphctl says so and exits with status 1.`,
		Example: `  resgraphctl get linkstatuses
  resgraphctl get linkstatuses -w
  resgraphctl get linkspec eth0 -o yaml
  resgraphctl get addressspecs -l 'net.resgraph.dev/link in (eth0,eth1)' -o wide`,
		GroupID:           groupResources,
		Args:              rangeArgs(1, 2),
		ValidArgsFunction: a.completeTypeAndID,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) == 2 {
				id = args[1]
			}
			return a.get(cmd.Context(), args[0], id, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "the `NAMESPACE` (default: the type's)")
	f.StringArrayVarP(&o.selectors, "selector", "l", nil, "select by labels (`SELECTOR`: see above); repeat for a union")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, wide, yaml or json")
	f.BoolVarP(&o.watch, "watch", "w", false, "print every change as it comes, until Ctrl-C")
	f.BoolVar(&o.showSensitive, "show-sensitive", false, "print the specs of sensitive types")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(printer.Formats, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// parseSelectors parses the -l flags: one label query each.
func parseSelectors(sels []string) ([][]resource.LabelQueryOption, error) {
	qs := make([][]resource.LabelQueryOption, 0, len(sels))
	for _, s := range sels {
		q, err := selector.Parse(s)
		if err != nil {
			return nil, usageErr(err)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

func (a *app) get(ctx context.Context, typeName, id string, o getOptions) error {
	format, err := printer.ParseFormat(o.output)
	if err != nil {
		return usageErr(err)
	}
	queries, err := parseSelectors(o.selectors)
	if err != nil {
		return err
	}
	kind, def, err := a.kind(ctx, typeName, o.namespace)
	if err != nil {
		return err
	}
	p := printer.New(a.stdout, printer.Options{Format: format, Definition: def, ShowSensitive: o.showSensitive})
	if o.watch {
		return a.watch(ctx, kind, def, id, queries, p)
	}
	st, err := a.state()
	if err != nil {
		return err
	}
	rctx, cancel := a.request(ctx)
	defer cancel()
	var items []printer.Item
	if id != "" && len(queries) == 0 {
		r, err := st.Get(rctx, resource.NewPointer(kind.Namespace(), kind.Type(), id))
		if err != nil {
			return err
		}
		items = append(items, printer.Item{Resource: r})
	} else {
		var opts []state.ListOption
		for _, q := range queries {
			opts = append(opts, state.WithLabelQuery(q...))
		}
		if id != "" {
			opts = append(opts, state.WithIDQuery(resource.IDRegexpMatch(exactly(id))))
		}
		l, err := st.List(rctx, kind, opts...)
		if err != nil {
			return err
		}
		for _, r := range l.Items {
			items = append(items, printer.Item{Resource: r})
		}
		if len(items) == 0 && (format == printer.Table || format == printer.Wide) {
			_, err := fmt.Fprintf(a.stderr, "No %s in namespace %s.\n", def.Type, kind.Namespace())
			return err
		}
	}
	return p.Print(items, false)
}

// exactly is the ID query of one ID.
func exactly(id resource.ID) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(id) + "$")
}
