package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state"
)

type deleteOptions struct {
	namespace string
	selectors []string
	files     []string
	timeout   time.Duration
}

func newDelete(a *app) *cobra.Command {
	var o deleteOptions
	c := &cobra.Command{
		Use:   "delete (TYPE ID... | TYPE -l SELECTOR | -f FILE)",
		Short: "Tear resources down and destroy them once their finalizers are gone",
		Long: `Remove resources the way resgraph removes them: tear each down (its phase
becomes "tearing down", which tells the controllers holding a finalizer on
it to let it go), wait until it has no finalizer left, then destroy it.

--timeout bounds the wait for each resource. When it passes, resgraphctl
names the finalizers that remain and exits with status 1; the resource stays
tearing down, and running delete again waits again ("resgraphctl explain
TYPE ID" says what each controller is doing about it).

Only resources without an owner can be deleted: a controller's resources
are its to remove.`,
		Example: `  resgraphctl delete linkspec eth1
  resgraphctl delete linkspecs -l role=test --timeout 2m
  resgraphctl delete -f links.yaml`,
		GroupID:           groupResources,
		ValidArgsFunction: a.completeTypeAndIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.delete(cmd.Context(), args, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "the `NAMESPACE` (default: the type's)")
	f.StringArrayVarP(&o.selectors, "selector", "l", nil, "delete the resources the label `SELECTOR` selects (see get --help); repeat for a union")
	f.StringArrayVarP(&o.files, "filename", "f", nil, "delete the resources of a `FILE` (- for the standard input)")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "how long to wait for each resource's finalizers")
	return c
}

func (a *app) delete(ctx context.Context, args []string, o deleteOptions) error {
	if o.timeout <= 0 {
		return usageErr(errorf("--timeout must be positive, got %s", o.timeout))
	}
	ptrs, err := a.deleteTargets(ctx, args, o)
	if err != nil {
		return err
	}
	return each(ctx, a, ptrs, func(p resource.Pointer) resource.Pointer { return p },
		func(ctx context.Context, ptr resource.Pointer, def definition.Definition) (string, error) {
			return a.deleteOne(ctx, ptr, def, o.timeout)
		})
}

// deleteTargets returns the resources the command line names.
func (a *app) deleteTargets(ctx context.Context, args []string, o deleteOptions) ([]resource.Pointer, error) {
	switch {
	case len(o.files) > 0 && (len(args) > 0 || len(o.selectors) > 0):
		return nil, usageErr(errorf("delete: -f names the resources: give no TYPE, ID or -l with it"))
	case len(o.files) > 0:
		rs, err := a.readFiles(ctx, o.files)
		if err != nil {
			return nil, err
		}
		ptrs := make([]resource.Pointer, 0, len(rs))
		for _, r := range rs {
			ptrs = append(ptrs, pointerOf(r))
		}
		return ptrs, nil
	case len(args) == 0:
		return nil, usageErr(errorf("delete: want TYPE ID..., TYPE -l SELECTOR or -f FILE"))
	case len(args) == 1 && len(o.selectors) == 0:
		return nil, usageErr(errorf("delete %s: name the IDs, or select them with -l", args[0]))
	case len(args) > 1 && len(o.selectors) > 0:
		return nil, usageErr(errorf("delete %s: give IDs or -l, not both", args[0]))
	}
	queries, err := parseSelectors(o.selectors)
	if err != nil {
		return nil, err
	}
	kind, _, err := a.kind(ctx, args[0], o.namespace)
	if err != nil {
		return nil, err
	}
	var ptrs []resource.Pointer
	for _, id := range args[1:] {
		ptrs = append(ptrs, resource.NewPointer(kind.Namespace(), kind.Type(), id))
	}
	if len(queries) == 0 {
		return ptrs, nil
	}
	return a.selected(ctx, kind, queries)
}

// selected lists the resources of kind the queries select.
func (a *app) selected(ctx context.Context, kind resource.Kind, queries [][]resource.LabelQueryOption) ([]resource.Pointer, error) {
	st, err := a.state()
	if err != nil {
		return nil, err
	}
	opts := make([]state.ListOption, 0, len(queries))
	for _, q := range queries {
		opts = append(opts, state.WithLabelQuery(q...))
	}
	ctx, cancel := a.request(ctx)
	defer cancel()
	l, err := st.List(ctx, kind, opts...)
	if err != nil {
		return nil, err
	}
	ptrs := make([]resource.Pointer, 0, len(l.Items))
	for _, r := range l.Items {
		ptrs = append(ptrs, pointerOf(r))
	}
	return ptrs, nil
}

// deleteOne tears ptr down, waits up to timeout for its finalizers and
// destroys it.
func (a *app) deleteOne(ctx context.Context, ptr resource.Pointer, def definition.Definition, timeout time.Duration) (string, error) {
	st, err := a.state()
	if err != nil {
		return "", err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	ready, err := st.Teardown(ctx, ptr)
	if err != nil {
		return "", err
	}
	if !ready {
		if fins := a.finalizers(ctx, ptr); fins != "" {
			_, _ = fmt.Fprintf(a.stdout, "%s tearing down: waiting for its finalizers %s\n", named(def, ptr.ID()), fins)
		}
	}
	err = st.TeardownAndDestroy(ctx, ptr)
	if ctx.Err() != nil && err != nil {
		fins := a.finalizers(context.WithoutCancel(ctx), ptr)
		return "", fmt.Errorf("still tearing down after --timeout %s: finalizers %s remain (resgraphctl explain %s %s says what holds them)", timeout, orNone(fins, "none"), shortName(def), ptr.ID())
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("destroyed (%s)", time.Since(start).Round(time.Millisecond)), nil
}

// finalizers returns ptr's finalizers, comma-separated ("" if it has none
// or cannot be read).
func (a *app) finalizers(ctx context.Context, ptr resource.Pointer) string {
	st, err := a.state()
	if err != nil {
		return ""
	}
	ctx, cancel := a.request(ctx)
	defer cancel()
	r, err := st.Get(ctx, ptr)
	if err != nil {
		return ""
	}
	return strings.Join(*r.Metadata().Finalizers(), ", ")
}
