package sim

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// ErrTransient is the error of an injected transient write failure
// (Faults.Transient).
var ErrTransient = errors.New("sim: injected transient failure of the state")

// ErrKilled is what a write returns to its writer when the Runtime was
// killed right after it committed (Faults.Kill), and what every write of
// a killed Runtime's goroutines returns.
var ErrKilled = errors.New("sim: the Runtime was killed")

// Crash is the value a writer panics with after a write that committed
// (Faults.Crash).
type Crash struct {
	// Write is the write that committed, e.g. "updated B(ns/b1)".
	Write string
}

func (c Crash) String() string { return "sim: injected crash after " + c.Write }

// persistence is the inmem persistence of one Runtime's state: the run's
// committed state survives the Runtime (it is what the next Runtime's state
// is restored from), every commit is in the transcript, and the faults of controller
// writes are injected where the state would answer.
type persistence struct {
	r   *run
	inc *incarnation
}

var _ inmem.Persistence = (*persistence)(nil)

// Restore starts the state from the run's committed state.
func (p *persistence) Restore() inmem.Restored {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	out := inmem.Restored{Lineage: 0x51a, Run: uint32(p.inc.n), CreatedFloor: p.r.createdFloor}
	for _, r := range p.r.committed {
		out.Resources = append(out.Resources, r)
	}
	slices.SortFunc(out.Resources, func(a, b resource.Resource) int { return comparePointers(a.Metadata(), b.Metadata()) })
	return out
}

// Append commits one write to the run's state, or refuses it: every write
// of a killed Runtime, and the injected conflicts and transient failures.
func (p *persistence) Append(ns resource.Namespace, typ resource.Type, id resource.ID, r resource.Resource) (inmem.Pending, error) {
	ptr := resource.NewPointer(ns, typ, id)
	run := p.r
	run.mu.Lock()
	defer run.mu.Unlock()
	if p.inc.dead {
		return nil, fmt.Errorf("%w: %s not written", ErrKilled, resource.PointerString(ptr))
	}
	what := writeText(run.committed[ptr], r, ptr)
	var f faultKind
	if !run.outside {
		f = run.writeFaultLocked(run.actor, what, underRecovery)
	}
	switch f {
	case faultConflict:
		run.faultedLocked(fmt.Sprintf("conflict on %s (%s)", what, run.actor))
		return nil, state.NewConflictError(ptr, "sim: injected conflict")
	case faultTransient:
		run.faultedLocked(fmt.Sprintf("transient failure of %s (%s)", what, run.actor))
		return nil, fmt.Errorf("%s: %w", resource.PointerString(ptr), ErrTransient)
	}
	prev := run.committed[ptr]
	if r == nil {
		delete(run.committed, ptr)
	} else {
		run.committed[ptr] = r
		if c := r.Metadata().Created(); c.After(run.createdFloor) {
			run.createdFloor = c
		}
	}
	run.noteCommitLocked(ptr, prev, r)
	actor := run.actor
	if run.outside {
		actor = "outside"
	}
	run.eventLocked("commit", commitText(actor, prev, r, ptr))
	switch f {
	case faultCrash:
		run.faultedLocked(fmt.Sprintf("crash of %s after it %s", run.actor, what))
		return crashAfter{Crash{Write: what}}, nil
	case faultKill:
		run.faultedLocked(fmt.Sprintf("kill of the Runtime after %s %s", run.actor, what))
		run.killRequested = true
		return killAfter{p.inc.killed}, nil
	}
	return nil, nil
}

// writeText names a write by what it does to the stored resource.
func writeText(prev, r resource.Resource, ptr resource.Pointer) string {
	switch {
	case r == nil:
		return "destroyed " + resource.PointerString(ptr)
	case prev == nil:
		return "created " + resource.PointerString(ptr)
	default:
		return "updated " + resource.PointerString(ptr)
	}
}

// underRecovery reports whether the calling goroutine runs user code
// under the Runtime's recovery — a Controller's Run or a QController's item
// — where an injected crash fails that Run or item. A write from a
// goroutine of the user's own is not crashed: nothing would recover it.
func underRecovery() bool {
	buf := make([]byte, 64<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	return strings.Contains(stack, "/pkg/runtime/internal/crunner.(*Runner).call(") ||
		strings.Contains(stack, "/pkg/runtime/internal/qrunner.(*Runner).call(")
}

// crashAfter makes a committed write panic in its writer's goroutine.
type crashAfter struct{ c Crash }

func (c crashAfter) Wait() error { panic(c.c) }

// killAfter keeps the writer of a committed write waiting until the
// Runtime is killed, then fails the write.
type killAfter struct{ killed chan struct{} }

func (k killAfter) Wait() error {
	<-k.killed
	return ErrKilled
}
