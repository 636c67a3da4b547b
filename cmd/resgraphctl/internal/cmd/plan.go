package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func newPlan(a *app) *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:   "plan -f FILE",
		Short: "Say what a change would do, without making it",
		Long: `Ask the daemon what a change would do: it runs its own controllers, over
fakes of its world, from a copy of its live state with the change applied,
to their fixed point, and prints every resource that would be created,
updated (field by field) or destroyed, which controller would write it and
why (the chain of causes from the change), and what the daemon would do to
the world. Nothing is written: not to the daemon's state, not to its world.

FILE (- for the standard input) is YAML or JSON:

  set:                                  # resources to create or update
    - type: linkspec                    # a type or an alias
      id: eth2
      spec: {MTU: 1500}                 # the spec, as resgraphctl get -o yaml shows it
  remove:                               # resources to remove
    - {type: linkspec, id: eth1}

or what get -o yaml (or -o json) prints, one resource or several, edited:
each resource is one to set (its type, namespace, ID, labels, annotations
and spec; the rest of its metadata is left as the daemon has it).

The exit status is 1 when the daemon refuses the change (an unknown type, a
resource one of its controllers writes, a resource to remove that does not
exist, a spec field its type does not have) or when it would not reach its
fixed point (a loop: the plan shows it).`,
		Example: `  resgraphctl plan -f change.yaml
  resgraphctl get linkspec eth1 -o yaml > eth1.yaml   # edit it, then:
  resgraphctl plan -f eth1.yaml
  echo 'remove: [{type: linkspec, id: eth1}]' | resgraphctl plan -f -`,
		GroupID: groupResources,
		Args:    rangeArgs(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErr(errorf("-f is required: the FILE of the change (- for the standard input)"))
			}
			return a.plan(cmd.Context(), file)
		},
	}
	c.Flags().StringVarP(&file, "filename", "f", "", "the change: a YAML or JSON `FILE` (- for the standard input)")
	return c
}

func (a *app) plan(ctx context.Context, file string) error {
	var in io.Reader = a.stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	change, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(change)) == 0 {
		return errorf("%s is empty: a change sets or removes resources (resgraphctl plan --help)", file)
	}
	fc, err := a.flight()
	if err != nil {
		return err
	}
	ctx, cancel := a.request(ctx)
	defer cancel()
	p, err := fc.Plan(ctx, file, change)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(a.stdout, p.Text); err != nil {
		return err
	}
	if !p.Converged {
		return fmt.Errorf("the daemon would not reach its fixed point: %s", p.Why)
	}
	return nil
}
