package telemetry

import (
	"time"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
)

// Engine is what every sink of one Runtime shares: its clock, its causal
// trace (a nil Ring: the trace is off) and whether counters and latency
// histograms are kept (Metrics). The sinks of a Runtime with neither are
// nil.
type Engine struct {
	Clock   *Clock
	Ring    *trace.Ring
	Metrics bool
}

// Off reports whether the Runtime keeps neither metrics nor a trace: its
// sinks are then nil.
func (e *Engine) Off() bool { return !e.Metrics && e.Ring == nil }

// Time returns the wall-clock time of a clock reading.
func (c *Clock) Time(d time.Duration) time.Time { return c.epoch.Add(d) }

// add records ev in the trace, stamped now, when the trace is on.
func (e *Engine) add(ev *trace.Record, now time.Time) {
	if e.Ring != nil {
		ev.Time = now
		e.Ring.Add(ev)
	}
}

// refOf names the resource of md at its version. Its strings are the
// metadata's own (interned): nothing is copied or allocated.
func refOf(md *resource.Metadata) trace.Ref {
	ns, typ, id := md.Identity()
	return trace.Ref{Namespace: ns, Type: typ, ID: id, Version: md.Version().Value()}
}

// refOfItem names the resource of a pointer key (no version).
func refOfKey(p resource.PointerKey) trace.Ref {
	return trace.Ref{Namespace: p.Namespace(), Type: p.Type(), ID: p.ID()}
}

// refOfTarget names the target of a runtime call: the committed metadata
// after a write, otherwise the caller's pointer, whose methods are user
// code (a panic leaves the ref empty). ok is false for a kind (List,
// CleanupOutputs) or a target that could not be read.
func refOfTarget(target resource.Kind) (r trace.Ref, ok bool) {
	if md, isMD := target.(*resource.Metadata); isMD && md != nil {
		return refOf(md), true
	}
	p, isPtr := target.(resource.Pointer)
	if !isPtr || usercode.IsNil(p) {
		return trace.Ref{}, false
	}
	defer func() {
		if recover() != nil {
			r, ok = trace.Ref{}, false
		}
	}()
	return trace.Ref{Namespace: p.Namespace(), Type: p.Type(), ID: p.ID()}, true
}

// kindOfTarget returns the kind key of a target that refOfTarget accepted
// (ref), without allocating for the Runtime's own pointers and without
// calling a method of a foreign implementation again.
func kindOfTarget(target resource.Kind, ref trace.Ref) resource.KindKey {
	switch t := target.(type) {
	case *resource.Metadata:
		return resource.KindOf(t)
	case resource.PointerKey:
		return t.Kind()
	}
	return resource.KindOf(resource.NewKind(ref.Namespace, ref.Type))
}
