package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

func newTypes(a *app) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:     "types",
		Aliases: []string{"api-resources"},
		Short:   "List the resource types the daemon knows, with their aliases",
		Long: `List the resource types the daemon knows (its resource definitions): each
type with the aliases the other commands accept for it, its default
namespace, the columns a table of it prints, and whether it is sensitive
(its specs are printed only with --show-sensitive). -o wide adds the
encoding of its specs and each column's path into the spec; -o yaml and
-o json print all of it as a list, for scripts.`,
		Example: "  resgraphctl types\n  resgraphctl types -o json\n  resgraphctl get linkstatuses   # a type by one of its aliases",
		GroupID: groupResources,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := printer.ParseFormat(output)
			if err != nil {
				return usageErr(err)
			}
			return a.types(cmd.Context(), f)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "table", "output format: table, wide, yaml or json")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(printer.Formats, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// typeDoc is a type as -o yaml and -o json print it.
type typeDoc struct {
	Type             string      `json:"type" yaml:"type"`
	Aliases          []string    `json:"aliases" yaml:"aliases"`
	DefaultNamespace string      `json:"defaultNamespace" yaml:"defaultNamespace"`
	Encoding         string      `json:"encoding" yaml:"encoding"`
	Columns          []columnDoc `json:"columns" yaml:"columns"`
	Sensitive        bool        `json:"sensitive" yaml:"sensitive"`
}

type columnDoc struct {
	Name string `json:"name" yaml:"name"`
	Path string `json:"path" yaml:"path"`
}

func (a *app) types(ctx context.Context, f printer.Format) error {
	defs, err := a.definitions(ctx)
	if err != nil {
		return err
	}
	switch f {
	case printer.JSONF, printer.YAMLF:
		return a.typeDocs(defs.All(), f)
	}
	head := []string{"TYPE", "ALIASES", "NAMESPACE", "COLUMNS", "SENSITIVE"}
	if f == printer.Wide {
		head = append(head, "ENCODING")
	}
	rows := [][]string{head}
	for _, d := range defs.All() {
		var cols []string
		for _, c := range d.Columns {
			if f == printer.Wide {
				cols = append(cols, c.Name+"="+c.Path)
			} else {
				cols = append(cols, c.Name)
			}
		}
		row := []string{d.Type, orNone(strings.Join(d.Aliases, ","), "-"), orNone(d.DefaultNamespace, "-"),
			orNone(strings.Join(cols, ","), "-"), strconv.FormatBool(d.Sensitive)}
		if f == printer.Wide {
			row = append(row, orNone(d.Encoding, "-"))
		}
		rows = append(rows, row)
	}
	return writeTable(a.stdout, rows)
}

// typeDocs prints defs as a JSON or YAML list of typeDoc.
func (a *app) typeDocs(defs []definition.Definition, f printer.Format) error {
	docs := make([]typeDoc, 0, len(defs))
	for _, d := range defs {
		doc := typeDoc{Type: d.Type, Aliases: d.Aliases, DefaultNamespace: d.DefaultNamespace, Encoding: d.Encoding,
			Columns: []columnDoc{}, Sensitive: d.Sensitive}
		if doc.Aliases == nil {
			doc.Aliases = []string{}
		}
		for _, c := range d.Columns {
			doc.Columns = append(doc.Columns, columnDoc{Name: c.Name, Path: c.Path})
		}
		docs = append(docs, doc)
	}
	var buf bytes.Buffer
	if f == printer.JSONF {
		b, err := json.MarshalIndent(docs, "", "  ")
		if err != nil {
			return err
		}
		buf.Write(append(b, '\n'))
	} else {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(4)
		if err := enc.Encode(docs); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
	}
	_, err := a.stdout.Write(buf.Bytes())
	return err
}
