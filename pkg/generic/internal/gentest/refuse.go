package gentest

import (
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// AssertRefused registers ctrl (a controller.Controller or
// controller.QController) in a real engine and checks rule G2's refusal:
// the registration fails with an invalid-class error whose message names
// the controller (name, quoted) and contains every fragment of setting,
// and nothing is registered.
func AssertRefused(tb testing.TB, ctrl any, name string, setting ...string) {
	tb.Helper()
	rt, err := runtime.New(inmem.NewState(), zaptest.NewLogger(tb))
	if err != nil {
		tb.Fatalf("runtime.New: %v", err)
	}
	err = Register(rt, ctrl)
	switch {
	case err == nil:
		tb.Fatalf("registration of %q accepted, want it refused", name)
	case !state.IsInvalidError(err):
		tb.Errorf("refusal is not of the invalid class: %v", err)
	case !strings.Contains(err.Error(), strconv.Quote(name)):
		tb.Errorf("refusal does not name the controller %q: %v", name, err)
	}
	for _, s := range setting {
		if !strings.Contains(err.Error(), s) {
			tb.Errorf("refusal does not name the setting (%q): %v", s, err)
		}
	}
	if n := len(rt.ControllerStatuses()); n != 0 {
		tb.Errorf("%d controllers registered after a refusal, want none", n)
	}
}
