package main

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/plan"

	"github.com/resgraph/resgraph/cmd/demo/internal/controllers"
	"github.com/resgraph/resgraph/cmd/demo/internal/intent"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// planCmd is apply --plan: it plans the change from the intent of
// currentFile ("" the built-in sample) to the intent of file, against the
// state the agent reaches from the current intent, and prints the plan.
// It writes nothing anywhere (the agent's world is a fake kernel).
func planCmd(ctx context.Context, w io.Writer, file, currentFile string) error {
	cur, err := loadIntent(currentFile)
	if err != nil {
		return err
	}
	next, err := intent.Load(file)
	if err != nil {
		return err
	}
	reached, err := plan.Make(ctx, plan.NewState(nil), controllers.PlanDaemon(), intentChange(nil, cur))
	if err != nil {
		return err
	}
	if !reached.Converged {
		return fmt.Errorf("the agent does not converge from %s: %s", cur.File, reached.Why)
	}
	p, err := plan.Make(ctx, plan.NewState(reached.Final), controllers.PlanDaemon(), intentChange(cur, next),
		plan.WithSensitive(netres.Codec().Definitions().Sensitive))
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "Plan of %s, for the agent running %s:\n\n", next.File, cur.File); err != nil {
		return err
	}
	return p.WriteText(w)
}

// plan plans a change file (resgraphctl plan -f) against the agent's
// live state, with its controllers over a fake kernel made from that
// state: it writes nothing, to the state or to the kernel.
func (d *daemon) plan(ctx context.Context, change []byte) (*plan.Plan, error) {
	c, err := plan.ParseChange(bytes.NewReader(change), d.codec)
	if err != nil {
		return nil, err
	}
	return plan.Make(ctx, d.state, controllers.PlanDaemon(), c, plan.WithSensitive(d.codec.Definitions().Sensitive))
}

// intentChange is the change from the intent cur (nil: none) to next:
// the LinkSpecs of next that are new or differ, and the removal of those
// next no longer has.
func intentChange(cur, next *intent.Intent) plan.Change {
	var c plan.Change
	had := map[string]netres.LinkSpecSpec{}
	if cur != nil {
		for _, l := range cur.Links {
			had[l.Name] = l.Spec
		}
	}
	for _, l := range next.Links {
		if old, ok := had[l.Name]; ok && old.Equal(l.Spec) {
			delete(had, l.Name)
			continue
		}
		delete(had, l.Name)
		ls := netres.NewLinkSpec(l.Name)
		*ls.TypedSpec() = l.Spec
		c.Set = append(c.Set, ls)
	}
	if cur != nil {
		for _, l := range cur.Links {
			if _, gone := had[l.Name]; gone {
				c.Remove = append(c.Remove, resource.NewPointer(netres.ConfigNamespace, netres.LinkSpecType, l.Name))
			}
		}
	}
	return c
}
