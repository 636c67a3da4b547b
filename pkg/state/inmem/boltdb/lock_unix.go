//go:build unix

package boltdb

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock of f without waiting; false when
// another open file description holds it (another process, or another
// Open in this one).
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		default:
			return false, err
		}
	}
}
