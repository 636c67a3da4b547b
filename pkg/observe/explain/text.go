package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/resgraph/resgraph/pkg/observe/trace"
)

// Sentence describes d in words, times relative to now: "idle and up to
// date", "backing off until 15:04:05.000 (in 1.5s) after error "..."
// (attempt 3)", ...
func (d Doing) Sentence(now time.Time) string {
	var s string
	about := ""
	if d.Resource != nil {
		about = " " + d.Resource.String()
	}
	switch d.Work {
	case WorkIdle:
		s = "idle and up to date"
	case WorkQueued:
		s = "queued" + about + ", due " + dueText(d.Due, now)
	case WorkBackoff:
		if d.Error == "" {
			s = "waiting" + about + " for its requeue interval, due " + dueText(d.Due, now)
		} else {
			s = "backing off" + about + " until " + dueText(d.Due, now) + " after error " + strconv.Quote(d.Error)
		}
	case WorkRunning:
		s = "running" + about
		if !d.Since.IsZero() {
			s += " since " + clock(d.Since) + " (" + now.Sub(d.Since).Round(time.Microsecond).String() + ")"
		}
	case WorkWaitingFinalizer:
		s = "waiting on finalizer " + strings.Join(d.Finalizers, ", ") + " of" + about
	case WorkBlocked:
		s = "blocked because its input" + about + " does not exist"
	case WorkStarting:
		s = "starting"
	case WorkRestarting:
		s = "crashed; restarting " + dueText(d.Due, now)
		if d.Error != "" {
			s += " after error " + strconv.Quote(d.Error)
		}
	case WorkStopped:
		s = "stopped"
	case WorkParked:
		s = d.parked(about)
	case WorkStandby:
		s = "standby"
		if !d.Since.IsZero() {
			s += " since " + clock(d.Since)
		}
	default:
		s = string(d.Work)
	}
	if d.Attempt > 0 {
		s += fmt.Sprintf(" (attempt %d)", d.Attempt)
	}
	if d.Detail != "" {
		s += "; " + d.Detail
	}
	if d.HotLoop != "" {
		s += "; HOT LOOP: " + d.HotLoop
	}
	return s
}

// parked is the sentence of parked work: an item is parked until it
// changes; a Controller until an input does.
func (d Doing) parked(about string) string {
	s := "parked" + about + " until it changes"
	if about == "" && d.Attempt == 0 {
		s = "parked until an input changes"
	}
	if d.Error != "" {
		s += " after error " + strconv.Quote(d.Error)
	}
	return s
}

// clock formats a time of day with milliseconds.
func clock(t time.Time) string { return t.Format("15:04:05.000") }

// dueText says when something is due relative to now: "now", or "at T (in
// D)".
func dueText(due, now time.Time) string {
	if due.IsZero() || !due.After(now) {
		return "now"
	}
	return "at " + clock(due) + " (in " + due.Sub(now).Round(time.Millisecond).String() + ")"
}

// reconcileText describes a reconcile on one line.
func reconcileText(r Reconcile) string {
	var b strings.Builder
	b.WriteString(r.Controller)
	if r.Item != nil {
		op := r.Op
		if op == "" {
			op = "reconcile"
		}
		b.WriteString(" " + op + " " + r.Item.String())
	} else {
		b.WriteString(" pass")
	}
	b.WriteString(" at " + clock(r.Start))
	switch r.Outcome {
	case "running", "unknown":
		b.WriteString(": " + r.Outcome)
	default:
		fmt.Fprintf(&b, ": %s in %s", r.Outcome, r.Duration.Round(time.Microsecond))
	}
	if r.Wait > 0 {
		fmt.Fprintf(&b, " (waited %s)", r.Wait.Round(time.Microsecond))
	}
	if r.Error != "" {
		b.WriteString(" error " + strconv.Quote(r.Error))
	}
	return b.String()
}

// causeText describes what a reconcile ran for.
func causeText(r Reconcile) string {
	if r.Cause == nil {
		return "start, retry or requeue"
	}
	s := r.Cause.String()
	if r.Causes > 1 {
		s += fmt.Sprintf(" and %d more changes", r.Causes-1)
	}
	return s
}

func edgeList(es []Edge) string {
	if len(es) == 0 {
		return "none"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Controller + " (" + e.EdgeType + ")"
	}
	return strings.Join(parts, ", ")
}

// WriteText writes x — a Resource or a Controller (or a pointer to one) —
// as plain text, for a terminal. Other values are an error.
func WriteText(w io.Writer, x any) error {
	var b strings.Builder
	switch v := x.(type) {
	case Resource:
		resourceText(&b, &v)
	case *Resource:
		resourceText(&b, v)
	case Controller:
		controllerText(&b, &v)
	case *Controller:
		controllerText(&b, v)
	default:
		return fmt.Errorf("explain: cannot render %T", x)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func resourceText(b *strings.Builder, r *Resource) {
	fmt.Fprintf(b, "resource %s\n", r.Resource.String())
	if r.Exists {
		fmt.Fprintf(b, "  exists: version %d, %s", r.Version, r.Phase)
		if r.Owner != "" {
			fmt.Fprintf(b, ", owner %s", r.Owner)
		}
		if len(r.Finalizers) > 0 {
			fmt.Fprintf(b, ", finalizers %s", strings.Join(r.Finalizers, ", "))
		}
		b.WriteString("\n")
	} else {
		b.WriteString("  does not exist\n")
	}
	fmt.Fprintf(b, "  written by: %s\n  read by: %s\n", edgeList(r.Writers), edgeList(r.Readers))
	b.WriteString("\nlast changes (newest first):\n")
	if len(r.Changes) == 0 {
		b.WriteString("  none in the trace\n")
	}
	for _, c := range r.Changes {
		who := "from outside the Runtime"
		switch {
		case c.Writer != "":
			who = "by " + c.Writer
		case c.Op == "existing":
			who = "when the Runtime listed its kind"
		}
		fmt.Fprintf(b, "  v%d at %s: %s %s\n", c.Version, clock(c.Time), c.Op, who)
		for _, rc := range c.Reconciles {
			fmt.Fprintf(b, "    -> %s\n", reconcileText(rc))
		}
	}
	b.WriteString("\ncontrollers now:\n")
	if len(r.Controllers) == 0 {
		b.WriteString("  none\n")
	}
	for _, c := range r.Controllers {
		fmt.Fprintf(b, "  %s (%s, %s): %s\n", c.Controller, c.Family, c.Role, c.Doing.Sentence(r.Time))
	}
	notesText(b, r.Notes)
}

func controllerText(b *strings.Builder, c *Controller) {
	fmt.Fprintf(b, "%s %s: %s\n", c.Family, c.Name, c.Doing.Sentence(c.Time))
	if c.Leadership != "" {
		fmt.Fprintf(b, "  leadership: %s\n", c.Leadership)
	}
	if c.LastError != "" {
		fmt.Fprintf(b, "  last error at %s: %s\n", clock(c.LastErrorAt), c.LastError)
	}
	k := c.Counters
	fmt.Fprintf(b, "  reconciles %d, crashes %d, restarts %d, wake-ups %d, requeues %d, queue %d, in flight %d\n",
		k.Reconciles, k.Crashes, k.Restarts, k.WakeUps, k.Requeues, k.QueueLen, k.InFlight)
	for _, name := range []string{"queueWait", "duration", "lag", "startup"} {
		if l, ok := c.Latencies[name]; ok && l.Count > 0 {
			fmt.Fprintf(b, "  %s: p50 %s, p99 %s over %d\n", name, l.P50.Round(time.Microsecond), l.P99.Round(time.Microsecond), l.Count)
		}
	}
	b.WriteString("\ninputs:\n")
	for _, in := range c.Inputs {
		fmt.Fprintf(b, "  %s %s", in.EdgeType, kindText(in.Namespace, in.Type, in.ID))
		switch {
		case in.NoWriter:
			fmt.Fprintf(b, " (%s)", NoWriterText)
		case in.OutsideWriter:
			fmt.Fprintf(b, " (%s)", OutsideWriterText)
		case len(in.Writers) > 0:
			fmt.Fprintf(b, " (written by %s)", strings.Join(in.Writers, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("outputs:\n")
	for _, out := range c.Outputs {
		fmt.Fprintf(b, "  %s %s", out.EdgeType, out.Type)
		if len(out.Readers) > 0 {
			fmt.Fprintf(b, " (read by %s)", strings.Join(out.Readers, ", "))
		}
		b.WriteString("\n")
	}
	if len(c.Items) > 0 {
		b.WriteString("\nitems:\n")
		for _, it := range c.Items {
			d := Doing{Work: it.Work, Due: it.Due, Attempt: it.Attempt, Error: it.Error}
			fmt.Fprintf(b, "  %s %s: %s\n", it.Op, it.Item.String(), d.Sentence(c.Time))
		}
	}
	b.WriteString("\nlast reconciles (newest first):\n")
	if len(c.Recent) == 0 {
		b.WriteString("  none in the trace\n")
	}
	for _, r := range c.Recent {
		fmt.Fprintf(b, "  %s\n    for %s\n", reconcileText(r), causeText(r))
	}
	notesText(b, c.Notes)
}

func kindText(ns, typ, id string) string {
	s := typ + "(" + ns
	if id != "" {
		s += "/" + id
	}
	return s + ")"
}

func notesText(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	b.WriteString("\nnotes:\n")
	for _, n := range notes {
		fmt.Fprintf(b, "  %s\n", n)
	}
}

// ParseResource parses a resource named "NAMESPACE/TYPE/ID" (as the
// /debug/explain?resource= parameter and the demo's explain command take
// it). The ID may contain slashes; namespace, type and ID must be
// non-empty.
func ParseResource(s string) (trace.Ref, error) {
	parts := strings.SplitN(s, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return trace.Ref{}, fmt.Errorf("resource %q: want NAMESPACE/TYPE/ID", s)
	}
	return trace.Ref{Namespace: parts[0], Type: parts[1], ID: parts[2]}, nil
}

// ResourceParam formats r as ParseResource reads it.
func ResourceParam(r trace.Ref) string { return r.Namespace + "/" + r.Type + "/" + r.ID }
