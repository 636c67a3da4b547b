package inmem

import (
	"encoding/binary"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// A bookmark is bookmarkLen bytes: a format tag, the state instance's ID,
// the kind's ID within that state, and the sequence number of the change
// (big-endian). A bookmark from another state or another kind fails to
// decode, so it is refused as invalid rather than misread.
const (
	bookmarkTag = 0x52 // 'R'
	bookmarkLen = 1 + 8 + 8 + 8
)

// bookmarkChunk is how many bookmarks a watcher carves from one allocation.
const bookmarkChunk = 64

// bookmarkAlloc hands out bookmarks for one watcher, carving them from
// chunks so that a burst of events costs one allocation per bookmarkChunk
// events. Each bookmark is capped at its own length, so appending to one
// never writes into another. Used by the watcher's goroutine, or by a
// writer holding the kind's lock while that goroutine is parked (see
// kindWatcher.handOffLocked).
type bookmarkAlloc struct {
	chunk []byte
}

func (a *bookmarkAlloc) make(ks *kindStore, seq uint64) state.Bookmark {
	if len(a.chunk) < bookmarkLen {
		a.chunk = make([]byte, bookmarkLen*bookmarkChunk)
	}
	b := a.chunk[:bookmarkLen:bookmarkLen]
	a.chunk = a.chunk[bookmarkLen:]
	encodeBookmark(b, ks.stateID, ks.kindID, seq)
	return b
}

func encodeBookmark(b []byte, stateID, kindID, seq uint64) {
	b[0] = bookmarkTag
	binary.BigEndian.PutUint64(b[1:], stateID)
	binary.BigEndian.PutUint64(b[9:], kindID)
	binary.BigEndian.PutUint64(b[17:], seq)
}

// decodeBookmark returns the sequence number b carries, or an invalid error
// when b is not a bookmark of this kind of this state.
func (ks *kindStore) decodeBookmark(ptr resource.Pointer, b state.Bookmark) (uint64, error) {
	if len(b) != bookmarkLen || b[0] != bookmarkTag {
		return 0, state.NewInvalidError(ptr, "watch %s: malformed bookmark", resource.KindString(ks.kind))
	}
	if sid := binary.BigEndian.Uint64(b[1:]); sid != ks.stateID || binary.BigEndian.Uint64(b[9:]) != ks.kindID {
		if earlierRun(ks.persistent, ks.stateID, sid) {
			return 0, state.NewBufferOverrunError(ptr, "watch %s: bookmark of an earlier run of this persistent state: the history does not survive a restart", resource.KindString(ks.kind))
		}
		return 0, state.NewInvalidError(ptr, "watch %s: bookmark of another state or kind", resource.KindString(ks.kind))
	}
	return binary.BigEndian.Uint64(b[17:]), nil
}
