package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
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
them. A file is written whole or not at all: every document is read,
then checked by the daemon as its write would be (a dry run: the type,
the spec's fields, the access rules, a resource that exists already —
apply updates it instead), and nothing is written when one is refused;
each refused document is named, with why. Then the documents are written
in order.
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

func (a *app) createOne(ctx context.Context, st state.State, r *remote.Unstructured) (string, error) {
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
