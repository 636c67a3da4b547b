package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/definition"
	"github.com/resgraph/resgraph/pkg/state/remote"
)

func newCreate(a *app) *cobra.Command {
	var files []string
	c := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create the resources of a file (YAML or JSON documents)",
		Long: `Create each resource of the files: YAML documents ("---" separated; JSON
documents too), each with metadata (type — or an alias —, id, and
optionally namespace, labels, annotations) and spec, as get -o yaml prints
them. Every document is read and checked before anything is written; a
resource that exists already is an error (apply updates it instead).
resgraphctl writes as an outside writer: the resources it creates have no
owner.`,
		Example: `  resgraphctl create -f link.yaml
  resgraphctl get linkspec eth0 -o yaml | sed 's/eth0/eth9/' | resgraphctl create -f -`,
		GroupID: groupResources,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.write(cmd.Context(), files, a.createOne)
		},
	}
	c.Flags().StringArrayVarP(&files, "filename", "f", nil, "a `FILE` of resources (- for the standard input); repeat for more")
	return c
}

// write reads the files and writes each resource with one, printing what
// it did; one resource failing does not stop the others.
func (a *app) write(ctx context.Context, files []string, one func(context.Context, *remote.Unstructured) (string, error)) error {
	rs, err := a.readFiles(ctx, files)
	if err != nil {
		return err
	}
	return each(ctx, a, rs, func(r *remote.Unstructured) resource.Pointer { return pointerOf(r) }, func(ctx context.Context, r *remote.Unstructured, _ definition.Definition) (string, error) {
		ctx, cancel := a.request(ctx)
		defer cancel()
		return one(ctx, r)
	})
}

func (a *app) createOne(ctx context.Context, r *remote.Unstructured) (string, error) {
	st, err := a.state()
	if err != nil {
		return "", err
	}
	if err := st.Create(ctx, r); err != nil {
		return "", err
	}
	return "created", nil
}

// pointerOf returns the pointer of r.
func pointerOf(r resource.Resource) resource.Pointer {
	md := r.Metadata()
	return resource.NewPointer(md.Namespace(), md.Type(), md.ID())
}
