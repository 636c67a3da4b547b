package recording

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// WriteText writes rec for people: its header, its kinds, the starting
// state and the changes, one per line. A spec of a sensitive kind is
// never printed (rule RC5): "<sensitive>" stands in its place; other
// specs are printed as resource.SpecString does (redacted by their
// RedactSpec, if any).
func WriteText(w io.Writer, rec *Recording) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "recording of %s, taken %s (%s)\n", orUnknown(rec.Source), rec.Taken.Format(time.RFC3339), rec.Reason)
	fmt.Fprintf(b, "covers %v from %s (revision %d)", rec.Duration().Round(time.Millisecond), rec.Start.Format(time.RFC3339Nano), rec.Revision)
	if !rec.Requested.IsZero() && rec.Start.After(rec.Requested) {
		fmt.Fprintf(b, "; asked to start at %s, the window had let go of %v before it", rec.Requested.Format(time.RFC3339Nano), rec.Start.Sub(rec.Requested).Round(time.Millisecond))
	}
	b.WriteString("\n")
	if rec.Coalesced > 0 {
		fmt.Fprintf(b, "coalesced: %d changes were seen merged with later ones (the recorder fell behind)\n", rec.Coalesced)
	}
	fmt.Fprintf(b, "controllers: %v\n", rec.Controllers)
	if rec.Replay != "" {
		fmt.Fprintf(b, "replay: %s\n", rec.Replay)
	}
	for _, k := range rec.Kinds {
		fmt.Fprintf(b, "kind %s(%s)%s\n", k.Type, k.Namespace, map[bool]string{true: " sensitive"}[k.Sensitive])
	}
	fmt.Fprintf(b, "starting state: %d resources\n", len(rec.Initial))
	for _, r := range rec.Initial {
		fmt.Fprintf(b, "  %s\n", ResourceText(rec, r))
	}
	fmt.Fprintf(b, "changes: %d\n", len(rec.Changes))
	for i := range rec.Changes {
		fmt.Fprintf(b, "  %s\n", ChangeText(rec, &rec.Changes[i]))
	}
	return b.Flush()
}

// ChangeText formats one change of rec on one line: its offset, author,
// op and resource (see [ResourceText]).
func ChangeText(rec *Recording, c *Change) string {
	who := c.By.String()
	if c.Writer != "" {
		who = c.Writer
	}
	if c.By == ByWorld && c.Op == OpRead {
		return fmt.Sprintf("+%v world read: %s (%d bytes)", c.Offset.Round(time.Microsecond), c.Action, len(c.Value))
	}
	if c.By == ByWorld {
		return fmt.Sprintf("+%v world: %s", c.Offset.Round(time.Microsecond), c.Action)
	}
	if c.Resource == nil { // a controller's change keeps no resource (rule RC3)
		s := fmt.Sprintf("+%v %s %s %s@%d", c.Offset.Round(time.Microsecond), who, c.Op, c.Pointer, c.Version)
		if c.Read != 0 {
			s += fmt.Sprintf(" (revision %d, its pass read revision %d)", c.Revision, c.Read)
		}
		if c.Item != (resource.PointerKey{}) {
			s += " item " + c.Item.String()
		}
		return s
	}
	return fmt.Sprintf("+%v %s %s %s", c.Offset.Round(time.Microsecond), who, c.Op, ResourceText(rec, c.Resource))
}

// ResourceText formats a resource of rec: its pointer, version, phase,
// owner, finalizers and labels, and its spec unless its kind is
// sensitive.
func ResourceText(rec *Recording, r resource.Resource) string {
	md := r.Metadata()
	s := fmt.Sprintf("%s@%s", resource.String(r), md.Version())
	if md.Phase() != resource.PhaseRunning {
		s += " " + md.Phase().String()
	}
	if md.Owner() != "" {
		s += " owner=" + md.Owner()
	}
	if fins := *md.Finalizers(); len(fins) > 0 {
		s += fmt.Sprintf(" finalizers=%v", []resource.Finalizer(fins))
	}
	if md.Labels().Len() > 0 {
		s += fmt.Sprintf(" labels=%v", md.Labels().Raw())
	}
	if rec.Sensitive(md) {
		return s + " spec=<sensitive>"
	}
	return s + " spec=" + resource.SpecString(r)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unnamed daemon"
	}
	return s
}
