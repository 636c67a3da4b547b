package cmd

import (
	"context"
	"fmt"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
)

// each does do for every item (a resource, named by ptr), printing a line
// for each: "linkspec/eth0 WHAT" on stdout, or its error on stderr. One
// item failing does not stop the others. The error is the one line
// already printed when there was one item (Main prints nothing more), and
// counts the failures when there were several.
func each[T any](ctx context.Context, a *app, items []T, ptr func(T) resource.Pointer, do func(context.Context, T, definition.Definition) (string, error)) error {
	defs, err := a.definitions(ctx)
	if err != nil {
		return err
	}
	failed := 0
	for _, it := range items {
		p := ptr(it)
		def, _ := defs.Get(p.Type())
		what, err := do(ctx, it, def)
		if err != nil {
			failed++
			_, _ = fmt.Fprintf(a.stderr, "resgraphctl: %s: %s\n", named(def, p.ID()), a.message(err))
			continue
		}
		_, _ = fmt.Fprintf(a.stdout, "%s %s\n", named(def, p.ID()), what)
	}
	switch {
	case failed == 0:
		return nil
	case len(items) == 1:
		return errPrinted
	}
	return fmt.Errorf("%d of %d resources failed", failed, len(items))
}
