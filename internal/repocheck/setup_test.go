package repocheck_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// setup runs scripts/setup --check with env added and returns its exit
// code and standard error (its standard output when it passes).
func setup(t *testing.T, env ...string) (int, string) {
	t.Helper()
	out, err := runIn(t, root(t), env, filepath.Join(root(t), "scripts", "setup"), "--check")
	var ce *cmdError
	if err == nil {
		return 0, string(out)
	}
	if !errors.As(err, &ce) {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if !errors.As(ce.err, &ee) {
		t.Fatal(err)
	}
	return ee.ExitCode(), ce.stderr
}

// TestB1_SetupPassesWhenNothingIsMissing: on a machine set up (make test
// runs scripts/setup first), the check finds every tool the tests need,
// and says so.
func TestB1_SetupPassesWhenNothingIsMissing(t *testing.T) {
	code, out := setup(t)
	if code != 0 {
		t.Fatalf("scripts/setup --check: exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "setup: nothing is missing (checked: go") {
		t.Errorf("scripts/setup --check passed without saying what it checked: %q", out)
	}
}

// TestB1_SetupNamesWhatIsMissing: a missing tool is named with its Debian
// package and the command that installs it, and the check fails.
func TestB1_SetupNamesWhatIsMissing(t *testing.T) {
	code, stderr := setup(t, "RESGRAPH_SETUP_PRETEND_MISSING=etcd chromium dot")
	if code != 1 {
		t.Fatalf("scripts/setup --check with etcd, chromium and dot missing: exit %d, want 1:\n%s", code, stderr)
	}
	for _, want := range []string{"missing: etcd chromium dot", "apt-get install -y etcd-server chromium graphviz"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("scripts/setup --check does not say %q:\n%s", want, stderr)
		}
	}
}
