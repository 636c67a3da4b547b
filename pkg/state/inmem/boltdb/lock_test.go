package boltdb_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// lockChildEnv makes the test binary a process that opens a state file
// (its value: "hold,PATH" or "try,PATH"). A holder prints "ready", keeps
// the file open until its stdin ends, then closes it and prints "closed".
// A trier opens the file once and prints the outcome: "opened", or
// "refused PID" (the holder's PID, 0 when unknown) and the error on the
// next line.
const lockChildEnv = "RESGRAPH_BOLTDB_LOCK_CHILD"

func runLockChild(arg string) int {
	mode, path, _ := strings.Cut(arg, ",")
	st, err := boltdb.Open(path, registry())
	if mode == "try" {
		if err != nil {
			var fe *boltdb.FileError
			pid := 0
			if errors.As(err, &fe) && fe.Holder != nil {
				pid = fe.Holder.PID
			}
			fmt.Printf("refused %d\n%s\n", pid, strings.ReplaceAll(err.Error(), "\n", " "))
			return 0
		}
		fmt.Println("opened")
		_ = st.Close()
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := st.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 2
	}
	fmt.Println("closed")
	return 0
}

// lockChild is a running lock child.
type lockChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// startLockChild starts a lock child on path; the test's cleanup kills it.
func startLockChild(t *testing.T, mode, path string) *lockChild {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), lockChildEnv+"="+mode+","+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("lock child's stderr:\n%s", stderr.String())
		}
	})
	return &lockChild{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
}

// line returns the child's next line of output ("" at its end).
func (c *lockChild) line() string {
	if !c.out.Scan() {
		return ""
	}
	return c.out.Text()
}

// TestLock_SecondProcessRefusedAtOnce: while a process holds a state file
// open, Open in another process fails at once (no lock timeout set) with
// ErrLocked, naming the file and the holder's PID, and leaves the file as
// it was; once the holder closes it (or is killed), Open succeeds.
func TestLock_SecondProcessRefusedAtOnce(t *testing.T) {
	path := dbPath(t)
	st := open(t, path)
	require.NoError(t, st.Create(testContext(t), newPair("x", 1)))

	// This process holds the file: a second process is refused.
	try := startLockChild(t, "try", path)
	assert.Equal(t, "refused "+strconv.Itoa(os.Getpid()), try.line())
	msg := try.line()
	assert.Contains(t, msg, path, "the error names the file")
	assert.Contains(t, msg, fmt.Sprintf("process %d", os.Getpid()), "the error names the holder")
	require.NoError(t, st.Close())

	// Another process holds it: this one is refused.
	hold := startLockChild(t, "hold", path)
	require.Equal(t, "ready", hold.line())
	sum := checksum(t, path)
	_, err := boltdb.Open(path, registry())
	require.ErrorIs(t, err, boltdb.ErrLocked)
	var fe *boltdb.FileError
	require.ErrorAs(t, err, &fe)
	require.NotNil(t, fe.Holder, "the holder is named: %v", err)
	assert.Equal(t, hold.cmd.Process.Pid, fe.Holder.PID)
	assert.Equal(t, path, fe.Path)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), fmt.Sprintf("process %d", hold.cmd.Process.Pid))
	assert.Equal(t, sum, checksum(t, path), "the refused Open wrote nothing")

	// The holder closes the file: it may be opened again.
	require.NoError(t, hold.stdin.Close())
	require.Equal(t, "closed", hold.line())
	st2, err := boltdb.Open(path, registry())
	require.NoError(t, err)
	require.NoError(t, st2.Close())

	// A holder killed with SIGKILL lets go of it too.
	hold = startLockChild(t, "hold", path)
	require.Equal(t, "ready", hold.line())
	_, err = boltdb.Open(path, registry())
	require.ErrorIs(t, err, boltdb.ErrLocked)
	require.NoError(t, hold.cmd.Process.Kill())
	_ = hold.cmd.Wait()
	st3 := open(t, path)
	_, err = st3.Get(testContext(t), ptr("x"))
	assert.NoError(t, err)
}

// TestLock_SecondOpenInProcessRefused: a second Open of a file in the
// process that holds it is refused the same way, naming this process;
// after Close the file opens again.
func TestLock_SecondOpenInProcessRefused(t *testing.T) {
	path := dbPath(t)
	st, err := boltdb.Open(path, registry())
	require.NoError(t, err)
	_, err = boltdb.Open(path, registry())
	require.ErrorIs(t, err, boltdb.ErrLocked)
	var fe *boltdb.FileError
	require.ErrorAs(t, err, &fe)
	require.NotNil(t, fe.Holder)
	assert.Equal(t, os.Getpid(), fe.Holder.PID)
	assert.NotEmpty(t, fe.Holder.Command)
	assert.False(t, fe.Holder.Since.IsZero())
	require.NoError(t, st.Close())
	open(t, path)
}
