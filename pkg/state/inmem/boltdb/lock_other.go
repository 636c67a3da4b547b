//go:build !unix

package boltdb

import "os"

// tryLock takes the lock file on systems without flock: there, only
// bbolt's own lock of the state file keeps a second user out (and names
// no holder).
func tryLock(*os.File) (bool, error) { return true, nil }
