package boltdb

import (
	"errors"
	"fmt"
)

// The problems [Open] reports, each wrapped in a [*FileError] (test with
// errors.Is). Open refuses a file with any of them and leaves it as it
// was.
var (
	// ErrCorrupt: the file is not a bbolt database (random bytes, a
	// truncated or damaged file), or its resgraph metadata is damaged.
	ErrCorrupt = errors.New("not a valid bbolt database, or damaged")
	// ErrForeign: the file is a bbolt database of another application
	// (it has buckets this store does not know).
	ErrForeign = errors.New("a bbolt database of another application")
	// ErrNewerFormat: the file was written by a later version of this
	// store, in a format this one does not read.
	ErrNewerFormat = errors.New("written in a newer format")
	// ErrUndecodable: a stored resource does not decode: an unregistered
	// resource type (the error chain then holds the codec's
	// *codec.UnknownTypeError), bytes that are not a resource encoding, or
	// a key that does not name the resource it holds.
	ErrUndecodable = errors.New("a stored resource does not decode")
	// ErrKey: a key the file needs is missing or wrong: the file holds
	// records (or a key check) of a key ID the sealer's keys lack, or the
	// sealer gives a key under an ID the file knows that is not the one
	// that wrote under it. The error chain holds the *atrest.KeyError
	// naming the key ID (errors.Is with atrest.ErrKeyMissing or
	// atrest.ErrWrongKey). Refused in strict and lenient mode alike.
	ErrKey = errors.New("a key the file needs is missing or wrong")
	// ErrRecord: a stored record does not open: it fails authentication
	// (changed, copied from another resource's record, written by another
	// key under its ID), is malformed, or is not encrypted in a state
	// that encrypts. The error chain holds the *atrest.RecordError; Key
	// names the record. Refused in strict mode; in lenient mode the
	// record is left out and reported (see [WithSealer]).
	ErrRecord = errors.New("a stored record does not open")
	// ErrLocked: another state holds the file open (in another process
	// or in this one), and it stayed so for the lock timeout (none by
	// default); [FileError.Holder] names the holder when known.
	ErrLocked = errors.New("locked by another user of the file")
)

// ErrClosed is returned by every write after [State.Close]: nothing is
// written. Reads and watches go on serving the state as it was.
var ErrClosed = errors.New("boltdb: state closed")

// FileError is the error of [Open] for a file it refuses: Err is one of
// [ErrCorrupt], [ErrForeign], [ErrNewerFormat], [ErrUndecodable],
// [ErrKey], [ErrRecord] and [ErrLocked], or the error of the file system; errors.Is sees through it
// to that error and to the underlying cause.
type FileError struct {
	// Path is the file.
	Path string
	// Key names the stored resource at fault, as "type(namespace/id)", for
	// ErrUndecodable, ErrRecord and ErrKey of a record (the raw key,
	// quoted, when it does not parse).
	Key string
	// Err is the problem, Cause what revealed it (a bbolt or codec error;
	// nil when the problem says it all).
	Err, Cause error
	// Holder is the process holding the file, for ErrLocked (nil when
	// unknown: a holder still writing itself into the lock file, or
	// another program holding bbolt's lock).
	Holder *LockHolder
}

func (e *FileError) Error() string {
	s := "boltdb: open " + e.Path + ": " + e.Err.Error()
	if e.Key != "" {
		s += ": " + e.Key
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the problem and its cause.
func (e *FileError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// CommitError is what every write gets once a commit failed: the writes
// waiting for that commit, and all later ones (refused, nothing written),
// until the state is closed and opened again. The writes of the failed
// commit were applied in memory but may not be in the file; on the next
// Open the state is what the file holds: the writes of every commit that
// succeeded.
type CommitError struct {
	// Err is the cause (bbolt's or the file system's).
	Err error
}

func (e *CommitError) Error() string {
	return fmt.Sprintf("boltdb: commit failed, the state refuses writes until it is opened again: %v", e.Err)
}

// Unwrap returns the cause.
func (e *CommitError) Unwrap() error { return e.Err }

// IsCommitError reports whether err is or wraps a [*CommitError].
func IsCommitError(err error) bool {
	var ce *CommitError
	return errors.As(err, &ce)
}
