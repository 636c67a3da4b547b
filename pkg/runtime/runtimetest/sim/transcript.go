package sim

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/resgraph/resgraph/pkg/resource"
)

// Entry is one entry of a run's transcript: the steps the scheduler took and,
// within each, what followed from it — the commits (each by the step's
// actor), the faults injected, the Runtime's and the controllers' log
// lines, and the check that failed. The same run (seed, or replay token)
// gives the same transcript, entry by entry.
type Entry struct {
	// Step is the step's number (0: before the first step).
	Step int
	// At is the virtual time since the run started.
	At time.Duration
	// What is "step", "commit", "fault", "log", "Runtime" (a start or a
	// stop of a Runtime) or "check".
	What string
	Text string
}

// String formats the entry as a transcript line.
func (e Entry) String() string {
	return fmt.Sprintf("%5d %10s  %-6s %s", e.Step, e.At.Round(time.Microsecond), e.What, e.Text)
}

// Transcript is a run's account: its entries, in order.
type Transcript []Entry

// String formats every entry, one per line.
func (t Transcript) String() string {
	var b strings.Builder
	for _, e := range t {
		b.WriteString(e.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Tail returns the last n entries (all when fewer).
func (t Transcript) Tail(n int) Transcript {
	if len(t) <= n {
		return t
	}
	return t[len(t)-n:]
}

// commitText describes a commit: the resource's new state, or its destroy.
func commitText(actor string, prev, r resource.Resource, ptr resource.Pointer) string {
	if r == nil {
		return fmt.Sprintf("%s: destroyed %s", actor, resource.PointerString(ptr))
	}
	verb := "updated"
	if prev == nil {
		verb = "created"
	}
	md := r.Metadata()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s %s v%s", actor, verb, resource.PointerString(md), md.Version())
	if o := md.Owner(); o != "" {
		fmt.Fprintf(&b, " owner=%s", o)
	}
	if md.Phase() != resource.PhaseRunning {
		fmt.Fprintf(&b, " phase=%s", md.Phase())
	}
	if f := *md.Finalizers(); len(f) > 0 {
		fmt.Fprintf(&b, " finalizers=%v", []resource.Finalizer(f))
	}
	if l := md.Labels().Raw(); len(l) > 0 {
		fmt.Fprintf(&b, " labels=%v", sortedMap(l))
	}
	fmt.Fprintf(&b, " spec=%s", specText(r))
	return b.String()
}

func sortedMap(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + m[k]
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// traceCore is the zap core of the Runtimes a run starts: every entry at
// info level and above becomes a "log" entry of the run's transcript (the
// Runtime's own lines and the controllers'), without the stacks of panics,
// which name goroutines and addresses.
type traceCore struct {
	r      *run
	fields []zapcore.Field
}

func newTraceLogger(r *run) *zap.Logger { return zap.New(&traceCore{r: r}) }

func (c *traceCore) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

func (c *traceCore) With(fields []zapcore.Field) zapcore.Core {
	return &traceCore{r: c.r, fields: append(slices.Clone(c.fields), fields...)}
}

func (c *traceCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *traceCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(slices.Clone(c.fields), fields...) {
		if f.Key == "stack" {
			continue
		}
		f.AddTo(enc)
	}
	keys := slices.Sorted(maps.Keys(enc.Fields))
	var b strings.Builder
	b.WriteString(strings.ToUpper(e.Level.String()))
	if e.LoggerName != "" {
		b.WriteString(" " + e.LoggerName)
	}
	b.WriteString(": " + e.Message)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, enc.Fields[k])
	}
	c.r.event("log", b.String())
	return nil
}

func (c *traceCore) Sync() error { return nil }
