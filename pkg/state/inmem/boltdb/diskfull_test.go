package boltdb_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// diskFullEnv starts a child process as the writer of
// TestCommitFailure_DiskFull.
const diskFullEnv = "RESGRAPH_BOLTDB_DISKFULL_CHILD"

// TestCommitFailure_DiskFull: a real I/O failure. A child process (this
// test binary again) opens a state, then lowers its file size limit
// (RLIMIT_FSIZE, with SIGXFSZ ignored, so that growing the file fails
// with EFBIG as on a full disk) and creates resources until a write fails.
// That write must fail with a *CommitError, and so must every later write
// (refused: nothing written, in memory either) and Close; reopened without
// the limit, the file holds exactly the acknowledged writes: a prefix.
func TestCommitFailure_DiskFull(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	path := dbPath(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), diskFullEnv+"="+path)
	cmd.ExtraFiles = []*os.File{w}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	w.Close()
	acked := map[string]bool{}
	done := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "K "):
			acked[strings.TrimPrefix(line, "K ")] = true
		case line == "DONE":
			done = true
		}
	}
	require.NoError(t, cmd.Wait(), "child: %s", stderr.String())
	require.True(t, done)
	require.NotEmpty(t, acked, "some writes succeeded before the limit")
	t.Logf("%d writes acknowledged before the disk was full", len(acked))

	st := open(t, path)
	l, err := st.List(testContext(t), testKind)
	require.NoError(t, err)
	found := map[string]bool{}
	for _, r := range l.Items {
		found[r.Metadata().ID()] = true
	}
	assert.Equal(t, acked, found, "the file holds exactly the acknowledged writes")
}

// runDiskFullChild is the writer of TestCommitFailure_DiskFull.
func runDiskFullChild(path string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		return code
	}
	report := os.NewFile(3, "report")
	ctx := context.Background()
	st, err := boltdb.Open(path, registry())
	if err != nil {
		return fail(2, "open: %v", err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return fail(2, "stat: %v", err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	limit := uint64(info.Size()) + 256<<10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		return fail(2, "setrlimit: %v", err)
	}
	// Four writers, so that writes queue behind the commit that fails:
	// they must fail with it, not be committed after it.
	pad := strings.Repeat("x", 1024)
	var mu sync.Mutex
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := 0; i < 100_000; i++ {
				id := fmt.Sprintf("g%d-%06d", g, i)
				r := newPair(id, i)
				r.Metadata().Labels().Set("pad", pad)
				if err := st.Create(ctx, r); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				fmt.Fprintf(report, "K %s\n", id)
				mu.Unlock()
			}
			errs <- errors.New("the file never filled up")
		}()
	}
	for range 4 {
		if err := <-errs; !boltdb.IsCommitError(err) {
			return fail(3, "a failed write: %v, not a CommitError", err)
		}
	}
	if err := st.Create(ctx, newPair("after", 0)); !boltdb.IsCommitError(err) {
		return fail(3, "a write after the failure: %v, not a CommitError", err)
	}
	if _, err := st.Get(ctx, ptr("after")); !state.IsNotFoundError(err) {
		return fail(3, "the refused write was applied in memory: %v", err)
	}
	if err := st.Close(); !boltdb.IsCommitError(err) {
		return fail(3, "Close: %v, not the CommitError", err)
	}
	fmt.Fprintln(report, "DONE")
	return 0
}
