package plan

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteText writes the plan for people, as `terraform plan` would: each
// resource created (+), updated (~, with its changed fields) or destroyed
// (-), who writes it and why (said, for a write nothing the plan saw
// leads to: rule PL5) — the drift before the change too, its chains from
// the live state —, the world actions, and whether the daemon
// converged (with the loop when it did not). A sensitive type's spec
// fields are not printed: "(sensitive)" stands for their values.
func (p *Plan) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	if len(p.Drift) > 0 {
		fmt.Fprintf(b, "Before the change, the daemon would change the live state (it was not at its fixed point):\n")
		p.writeChanges(b, p.Drift, driftUnexplained)
		b.WriteString("\n")
	}
	if len(p.Changes) == 0 {
		b.WriteString("No changes.\n")
	} else {
		fmt.Fprintf(b, "The change would:\n")
		p.writeChanges(b, p.Changes, unexplained)
	}
	if len(p.World) > 0 {
		b.WriteString("\nWorld actions the daemon would take:\n")
		for _, a := range p.World {
			fmt.Fprintf(b, "  %s\n", a)
		}
	}
	var create, update, destroy int
	for _, c := range p.Changes {
		switch c.Op {
		case Create:
			create++
		case Update:
			update++
		case Destroy:
			destroy++
		}
	}
	actions := "world actions"
	if len(p.World) == 1 {
		actions = "world action"
	}
	fmt.Fprintf(b, "\nPlan: %d to create, %d to update, %d to destroy, %d %s.\n", create, update, destroy, len(p.World), actions)
	if p.Converged {
		b.WriteString("The daemon reaches its fixed point.\n")
	} else {
		fmt.Fprintf(b, "The daemon does NOT reach a fixed point: %s\n", p.Why)
		if len(p.Loop) > 0 {
			b.WriteString("Its last commits:\n")
			for _, l := range p.Loop {
				fmt.Fprintf(b, "  %s\n", l)
			}
		}
	}
	return b.Flush()
}

// writeChanges writes changes, a write no chain explains said to follow
// from none (the text none gives).
func (p *Plan) writeChanges(b *bufio.Writer, changes []ResourceChange, none string) {
	for _, c := range changes {
		sign := map[Op]string{Create: "+", Update: "~", Destroy: "-"}[c.Op]
		fmt.Fprintf(b, "  %s %s", sign, c.Pointer)
		if c.Proposed {
			b.WriteString(" (proposed)")
		} else if len(c.Writers) > 0 {
			fmt.Fprintf(b, " (by %s)", strings.Join(c.Writers, ", "))
		}
		b.WriteString("\n")
		sensitive := p.sensitive != nil && p.sensitive(c.Pointer.Type())
		for _, f := range c.Fields {
			before, after := f.Before, f.After
			if sensitive && strings.HasPrefix(f.Path, "spec") {
				before, after = redacted(before), redacted(after)
			}
			switch {
			case c.Op == Create:
				fmt.Fprintf(b, "      %s: %s\n", f.Path, after)
			case before == "":
				fmt.Fprintf(b, "      %s: + %s\n", f.Path, after)
			case after == "":
				fmt.Fprintf(b, "      %s: - %s\n", f.Path, before)
			default:
				fmt.Fprintf(b, "      %s: %s → %s\n", f.Path, before, after)
			}
		}
		switch {
		case len(c.Chain) > 1:
			fmt.Fprintf(b, "      because: %s\n", strings.Join(c.Chain, " → "))
		case len(c.Chain) == 1:
			fmt.Fprintf(b, "      because: %s (%s)\n", none, c.Chain[0])
		case !c.Proposed && len(c.Writers) > 0:
			fmt.Fprintf(b, "      because: %s\n", untraced)
		}
	}
}

// unexplained is the cause the text gives a write that neither the
// change nor a world action leads to (rule PL5).
const unexplained = "nothing the plan saw: no proposed change nor world action leads to it"

// driftUnexplained is the cause the text gives a write of the daemon
// settling before the change that nothing of the live state leads to: a
// controller's pass at its start (rule PL5).
const driftUnexplained = "the daemon's start: no resource of the live state nor world action leads to it"

// untraced is the cause the text gives a change the plan's trace has no
// write of (a trace that lost records): its writer is its owner (rule
// PL5).
const untraced = "the plan's trace has no write of it (its owner is named its writer)"

func redacted(s string) string {
	if s == "" {
		return ""
	}
	return "(sensitive)"
}
