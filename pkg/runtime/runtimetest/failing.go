package runtimetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/resgraph/resgraph/pkg/observe"
	"github.com/resgraph/resgraph/pkg/runtime"
)

// running are the Runtimes that Start runs, each with the name of the test
// that started it, until that test ends: a wait that times out names the
// controllers of its test's Runtimes (and of its parent tests') that are
// failing.
var running = struct {
	sync.Mutex
	byTest map[*runtime.Runtime]string
}{byTest: map[*runtime.Runtime]string{}}

// track records rt as run by the test tb until tb ends.
func track(tb testing.TB, rt *runtime.Runtime) {
	running.Lock()
	running.byTest[rt] = tb.Name()
	running.Unlock()
	tb.Cleanup(func() {
		running.Lock()
		delete(running.byTest, rt)
		running.Unlock()
	})
}

// runtimesOf returns the Runtimes started by tb or by a test tb is a
// subtest of.
func runtimesOf(tb testing.TB) []*runtime.Runtime {
	name := tb.Name()
	running.Lock()
	defer running.Unlock()
	var out []*runtime.Runtime
	for rt, test := range running.byTest {
		if name == test || strings.HasPrefix(name, test+"/") {
			out = append(out, rt)
		}
	}
	return out
}

// failingText describes, for the message of a wait that timed out, the
// controllers of tb's Runtimes that are failing: each with its state, its
// last error and its parked items ("" when none is failing).
func failingText(tb testing.TB) string {
	var lines []string
	for _, rt := range runtimesOf(tb) {
		for _, st := range rt.Observe().Controllers() {
			if line, ok := failingLine(st); ok {
				lines = append(lines, line)
			}
		}
	}
	if len(lines) == 0 {
		return ""
	}
	slices.Sort(lines)
	return "\ncontrollers failing:\n" + strings.Join(lines, "\n")
}

// failingLine describes the controller of status st when it is failing:
// its last error not recovered from, a restart backoff, or items parked.
func failingLine(st observe.ControllerStatus) (string, bool) {
	failing := st.LastError != "" && !st.Recovered
	if !failing && st.ParkedItems == 0 && st.Lifecycle != observe.LifecycleBackoff && st.Lifecycle != observe.LifecycleParked {
		return "", false
	}
	line := fmt.Sprintf("  %s (%s", st.Name, st.Lifecycle)
	if st.FailingItems > 0 {
		line += fmt.Sprintf(", %d items failing", st.FailingItems)
	}
	if st.ParkedItems > 0 {
		line += fmt.Sprintf(", %d parked", st.ParkedItems)
	}
	line += ")"
	if st.LastError != "" {
		line += ": " + st.LastError
	}
	for _, p := range st.Parked {
		line += fmt.Sprintf("\n    parked %s after %d attempts: %s", p.Item, p.Attempts, p.LastError)
	}
	return line, true
}
