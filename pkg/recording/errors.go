package recording

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTruncated is wrapped by the [*FormatError] of a file that ends
// before its end frame: a recording cut short (a copy interrupted, a
// disk full). errors.Is(err, ErrTruncated) tells it.
var ErrTruncated = errors.New("truncated: the file ends before the recording's end frame")

// ErrCorrupted is wrapped by the [*FormatError] of a file whose bytes are
// not those written: a frame's checksum does not match, a field does not
// decode, frames are out of order, or counts disagree.
var ErrCorrupted = errors.New("corrupted")

// FormatError reports a file that is not a whole recording of a version
// this package reads. Decoding returns it, and no recording, for any
// damage: a recording is never returned partial.
type FormatError struct {
	// Offset is the byte offset of the frame (or field) at fault.
	Offset int64
	// Frame names the frame at fault ("header", "kind", "initial",
	// "change", "end"), when known.
	Frame string
	// Err is ErrTruncated or ErrCorrupted, wrapping what was found.
	Err error
}

func (e *FormatError) Error() string {
	where := fmt.Sprintf("at byte %d", e.Offset)
	if e.Frame != "" {
		where = e.Frame + " frame " + where
	}
	return "recording: " + where + ": " + e.Err.Error()
}

// Unwrap returns ErrTruncated or ErrCorrupted (wrapping the details).
func (e *FormatError) Unwrap() error { return e.Err }

// VersionError reports a file of a format version this package does not
// read (or a file that is not a recording at all: Version is then -1).
type VersionError struct {
	// Version is the file's format version; -1 when the file does not
	// start with a recording's magic bytes.
	Version int
}

func (e *VersionError) Error() string {
	if e.Version < 0 {
		return fmt.Sprintf("recording: not a recording (it does not start with %q)", magic)
	}
	return fmt.Sprintf("recording: format version %d; this build reads versions %d to %d only", e.Version, formatV3, FormatVersion)
}

// UnknownTypesError reports resource types of a recording that the codec
// registry given to decode it does not register: the recording cannot be
// replayed by a daemon that does not know them.
type UnknownTypesError struct {
	// Types are the unregistered types, sorted.
	Types []string
}

func (e *UnknownTypesError) Error() string {
	return "recording: resource types not registered in the codec registry: " + strings.Join(e.Types, ", ") +
		" (register them, or replay with the daemon that recorded it)"
}

// corrupt returns a FormatError wrapping ErrCorrupted.
func corrupt(off int64, frame, format string, args ...any) error {
	return &FormatError{Offset: off, Frame: frame, Err: fmt.Errorf("%w: %s", ErrCorrupted, fmt.Sprintf(format, args...))}
}

// truncated returns a FormatError wrapping ErrTruncated.
func truncated(off int64, frame string) error {
	return &FormatError{Offset: off, Frame: frame, Err: ErrTruncated}
}
