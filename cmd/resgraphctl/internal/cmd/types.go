package cmd

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

func newTypes(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "types",
		Aliases: []string{"api-resources"},
		Short:   "List the resource types the daemon knows, with their aliases",
		Long: `List the resource types the daemon knows (its resource definitions): each
type with the aliases the other commands accept for it, its default
namespace, the columns a table of it prints, and whether it is sensitive
(its specs are printed only with --show-sensitive).`,
		Example: "  resgraphctl types\n  resgraphctl get linkstatuses   # a type by one of its aliases",
		GroupID: groupResources,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.types(cmd.Context())
		},
	}
}

func (a *app) types(ctx context.Context) error {
	defs, err := a.definitions(ctx)
	if err != nil {
		return err
	}
	rows := [][]string{{"TYPE", "ALIASES", "NAMESPACE", "COLUMNS", "SENSITIVE"}}
	for _, d := range defs.All() {
		var cols []string
		for _, c := range d.Columns {
			cols = append(cols, c.Name)
		}
		rows = append(rows, []string{d.Type, orNone(strings.Join(d.Aliases, ","), "-"), orNone(d.DefaultNamespace, "-"),
			orNone(strings.Join(cols, ","), "-"), strconv.FormatBool(d.Sensitive)})
	}
	return writeTable(a.stdout, rows)
}
