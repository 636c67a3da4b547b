package boltdb

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The single-process lock. A file is used by one [State] at a time: Open
// takes an exclusive advisory lock on a file beside it (its path plus
// [LockSuffix]) before it reads the file, and writes there who holds it
// (process ID, host, command, since when); [State.Close] lets go of it,
// and so does the end of the process, however it ends. A second Open of
// the file, from another process or this one, finds the lock taken and
// fails at once with [ErrLocked], naming the holder ([LockHolder]).
// bbolt's own lock on the file itself is taken too, and bounds what
// another program that opens the file with bbolt can do.

// LockSuffix is appended to a state file's path to name its lock file.
const LockSuffix = ".lock"

// LockHolder is the process that holds a state file open, as it wrote
// itself into the lock file.
type LockHolder struct {
	// PID is the holder's process ID (on Host).
	PID int
	// Host is the holder's host name.
	Host string
	// Command is the base name of the holder's executable.
	Command string
	// Since is when it took the lock.
	Since time.Time
}

// String describes the holder: "process 1234 (demo) on host h since ...".
func (h *LockHolder) String() string {
	return fmt.Sprintf("process %d (%s) on host %s since %s", h.PID, h.Command, h.Host, h.Since.Format(time.RFC3339))
}

// lockRetry is how often Open tries the lock again while it waits for it
// ([WithLockTimeout]).
const lockRetry = 10 * time.Millisecond

// fileLock is a held lock of a state file.
type fileLock struct{ f *os.File }

// lock takes the lock of the state file at path, waiting up to timeout
// for its holder to let go; a lock it cannot take is a [*FileError] with
// [ErrLocked] naming the holder (when the lock file says who).
func lock(path string, timeout time.Duration) (*fileLock, error) {
	lp := path + LockSuffix
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	deadline := time.Now().Add(timeout)
	for {
		taken, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, &FileError{Path: path, Err: fmt.Errorf("lock %s: %w", lp, err)}
		}
		if taken {
			if err := writeHolder(f); err != nil {
				f.Close()
				return nil, &FileError{Path: path, Err: fmt.Errorf("lock %s: %w", lp, err)}
			}
			return &fileLock{f: f}, nil
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, lockedError(path, lp)
		}
		time.Sleep(lockRetry) // a poll: the holder's release wakes nobody
	}
}

// release lets go of the lock. The lock file stays (naming the last
// holder): removing it would race with a process that just opened it.
func (l *fileLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close() // closing the descriptor releases the lock
}

// writeHolder writes this process into the lock file.
func writeHolder(f *os.File) error {
	host, _ := os.Hostname()
	exe, _ := os.Executable()
	if exe == "" && len(os.Args) > 0 {
		exe = os.Args[0]
	}
	content := fmt.Sprintf("pid=%d\nhost=%s\ncommand=%s\nsince=%s\n",
		os.Getpid(), oneLine(host), oneLine(filepath.Base(exe)), time.Now().Format(time.RFC3339Nano))
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(content), 0)
	return err
}

// oneLine keeps a value on its line of the lock file.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// lockedError is the error of a lock held by another: it names the holder
// when the lock file says who (a holder that is still writing itself in
// is unknown).
func lockedError(path, lp string) error {
	b, err := os.ReadFile(lp)
	h, ok := parseHolder(b)
	if err != nil || !ok {
		return &FileError{Path: path, Err: ErrLocked, Cause: fmt.Errorf("held by a process that has not written itself into %s", lp)}
	}
	return &FileError{Path: path, Err: ErrLocked, Holder: h, Cause: fmt.Errorf("held by %s (lock file %s)", h, lp)}
}

// parseHolder reads the content of a lock file.
func parseHolder(b []byte) (*LockHolder, bool) {
	h := &LockHolder{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	var havePID bool
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "pid":
			n, err := strconv.Atoi(v)
			h.PID, havePID = n, err == nil && n > 0
		case "host":
			h.Host = v
		case "command":
			h.Command = v
		case "since":
			h.Since, _ = time.Parse(time.RFC3339Nano, v)
		}
	}
	return h, havePID
}
