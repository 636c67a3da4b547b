package cmd

import (
	"context"
	"slices"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds what a shell's completion asks the daemon (at
// most --request-timeout).
const completionTimeout = 5 * time.Second

// completion returns a context for a completion's questions.
func (a *app) completion(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, min(completionTimeout, a.requestTimeout))
}

// completeTypes completes a type name: every alias (or the type when it
// has none), with the type as its description.
func (a *app) completeTypes(ctx context.Context) ([]cobra.Completion, cobra.ShellCompDirective) {
	defs, err := a.definitions(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, d := range defs.All() {
		names := d.Aliases
		if len(names) == 0 {
			names = []string{d.Type}
		}
		for _, n := range names {
			out = append(out, cobra.CompletionWithDesc(n, d.Type))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeIDs completes the IDs of the type typeName in the namespace of
// the command's -n flag (or the type's), leaving out those in skip.
func (a *app) completeIDs(ctx context.Context, cmd *cobra.Command, typeName string, skip []string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ns, _ := cmd.Flags().GetString("namespace")
	kind, _, err := a.kind(ctx, typeName, ns)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	st, err := a.state()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	l, err := st.List(ctx, kind)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var out []cobra.Completion
	for _, r := range l.Items {
		if id := r.Metadata().ID(); !slices.Contains(skip, id) {
			out = append(out, id)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeTypeAndID completes TYPE, then ID.
func (a *app) completeTypeAndID(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := a.completion(cmd)
	defer cancel()
	switch len(args) {
	case 0:
		return a.completeTypes(ctx)
	case 1:
		return a.completeIDs(ctx, cmd, args[0], nil)
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeTypeAndIDs completes TYPE, then any number of IDs.
func (a *app) completeTypeAndIDs(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := a.completion(cmd)
	defer cancel()
	if len(args) == 0 {
		return a.completeTypes(ctx)
	}
	return a.completeIDs(ctx, cmd, args[0], args[1:])
}

// completeExplain completes "controller NAME" or "TYPE ID".
func (a *app) completeExplain(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := a.completion(cmd)
	defer cancel()
	switch {
	case len(args) == 0:
		types, dir := a.completeTypes(ctx)
		return append(types, cobra.CompletionWithDesc("controller", "explain a controller")), dir
	case len(args) == 1 && args[0] == "controller":
		return a.completeControllers(ctx)
	case len(args) == 1:
		return a.completeIDs(ctx, cmd, args[0], nil)
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeControllers completes the names of the daemon's controllers
// (those of its dependency graph).
func (a *app) completeControllers(ctx context.Context) ([]cobra.Completion, cobra.ShellCompDirective) {
	obs, err := a.observer()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	g, err := obs.Graph(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []string
	for _, e := range g.Edges {
		if !slices.Contains(names, e.ControllerName) {
			names = append(names, e.ControllerName)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
