package cmd

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/resgraph/resgraph/cmd/resgraphctl/internal/printer"
	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// describeChanges bounds the recent changes describe prints.
const describeChanges = 5

func newDescribe(a *app) *cobra.Command {
	var ns string
	var showSensitive bool
	c := &cobra.Command{
		Use:   "describe TYPE ID",
		Short: "Print a resource in full: metadata, who writes and reads it, its spec",
		Long: `Print one resource in full: its metadata (version, phase, owner, finalizers,
labels, annotations, times), the controllers that write it and read it and
what each is doing about it now, its last changes (from the daemon's
trace), and its spec (hidden for a sensitive type unless --show-sensitive).

The controllers and changes come from the daemon's explanation of the
resource (resgraphctl explain TYPE ID prints it whole).`,
		Example:           `  resgraphctl describe linkstatus eth0`,
		GroupID:           groupResources,
		Args:              rangeArgs(2, 2),
		ValidArgsFunction: a.completeTypeAndID,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.describe(cmd.Context(), args[0], args[1], ns, showSensitive)
		},
	}
	c.Flags().StringVarP(&ns, "namespace", "n", "", "the `NAMESPACE` (default: the type's)")
	c.Flags().BoolVar(&showSensitive, "show-sensitive", false, "print the spec of a sensitive type")
	return c
}

func (a *app) describe(ctx context.Context, typeName, id, ns string, show bool) error {
	kind, def, err := a.kind(ctx, typeName, ns)
	if err != nil {
		return err
	}
	st, err := a.state()
	if err != nil {
		return err
	}
	rctx, cancel := a.request(ctx)
	defer cancel()
	ptr := resource.NewPointer(kind.Namespace(), kind.Type(), id)
	r, err := st.Get(rctx, ptr)
	if err != nil {
		return err
	}
	var b strings.Builder
	describeMetadata(&b, r.Metadata(), def, time.Now())
	obs, err := a.observer()
	if err != nil {
		return err
	}
	if x, err := obs.Explain(rctx, ptr); err != nil {
		fmt.Fprintf(&b, "Controllers:  unknown (%s)\n", a.message(err))
	} else {
		describeExplanation(&b, &x)
	}
	if err := describeSpec(&b, r, def, show); err != nil {
		return err
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

func describeMetadata(b *strings.Builder, md *resource.Metadata, def definition.Definition, now time.Time) {
	field := func(name, value string) { fmt.Fprintf(b, "%-13s %s\n", name+":", value) }
	field("ID", md.ID())
	field("Namespace", md.Namespace())
	field("Type", def.Type+aliasText(def))
	field("Version", md.Version().String())
	field("Phase", md.Phase().String())
	field("Owner", orNone(md.Owner(), "none (written from outside the daemon's controllers)"))
	field("Finalizers", orNone(strings.Join(*md.Finalizers(), ", "), "none"))
	field("Labels", orNone(pairs(md.Labels().Raw()), "none"))
	field("Annotations", orNone(pairs(md.Annotations().Raw()), "none"))
	field("Created", when(md.Created(), now))
	field("Updated", when(md.Updated(), now))
}

func aliasText(def definition.Definition) string {
	if len(def.Aliases) == 0 {
		return ""
	}
	return " (" + strings.Join(def.Aliases, ", ") + ")"
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func pairs(m map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+"="+m[k])
	}
	return strings.Join(out, ", ")
}

func when(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(time.RFC3339) + " (" + printer.Age(now.Sub(t)) + " ago)"
}

func edges(es []explain.Edge) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Controller+" ("+e.EdgeType+")")
	}
	return orNone(strings.Join(out, ", "), "none")
}

func describeExplanation(b *strings.Builder, x *explain.Resource) {
	fmt.Fprintf(b, "%-13s %s\n%-13s %s\n", "Written by:", edges(x.Writers), "Read by:", edges(x.Readers))
	if len(x.Controllers) > 0 {
		b.WriteString("Controllers now:\n")
		for _, c := range x.Controllers {
			fmt.Fprintf(b, "  %s (%s): %s\n", c.Controller, c.Role, c.Doing.Sentence(x.Time))
		}
	}
	b.WriteString("Last changes:\n")
	if len(x.Changes) == 0 {
		b.WriteString("  none in the daemon's trace\n")
	}
	for i, c := range x.Changes {
		if i == describeChanges {
			fmt.Fprintf(b, "  ... (resgraphctl explain prints them all)\n")
			break
		}
		who := "from outside the daemon's controllers"
		switch {
		case c.Writer != "":
			who = "by " + c.Writer
		case c.Op == "existing":
			who = "(found when the daemon listed its kind)"
		}
		fmt.Fprintf(b, "  v%d %s %s %s\n", c.Version, c.Time.Local().Format("15:04:05.000"), c.Op, who)
	}
	for _, n := range x.Notes {
		fmt.Fprintf(b, "Note: %s\n", n)
	}
}

func describeSpec(b *strings.Builder, r resource.Resource, def definition.Definition, show bool) error {
	spec, err := printer.SpecYAML(r, def, show)
	if err != nil {
		return err
	}
	out, err := yaml.Marshal(spec)
	if err != nil {
		return err
	}
	b.WriteString("Spec:\n")
	for line := range strings.Lines(string(out)) {
		b.WriteString("  " + line)
	}
	return nil
}
