package transform

import (
	"encoding/binary"
	"strings"
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// A controller keeps an entry per input for as long as it runs, and the
// entries hold no pointer, so that the collector does not scan them: an
// entry names its input by an idKey, which holds an ID of up to
// inlineMax bytes in place (compared without leaving the entry's cache
// line) and a longer one as the place of its bytes in the Run's idArena,
// a byte slice the collector does not scan either.
//
// An ID read from a key (idArena.view) shares the key's or the arena's
// bytes: it is read while the entry and the arena stay as they are (a
// comparison, a map lookup) and never kept; what is kept (a map key, an
// item to retry) is a resource's own ID, or a copy (idArena.clone).

// idKey is an entry's input ID: up to inlineMax bytes in place, their
// count in the last byte; or, with longTag in the last byte, the offset
// (8 bytes) and length (4 bytes) of its bytes in the arena. The zero
// key is the empty ID.
type idKey [16]byte

const (
	// inlineMax is the longest ID a key holds in place.
	inlineMax = len(idKey{}) - 1
	// longTag marks a key whose ID is in the arena.
	longTag = 0x80
	// minArenaWaste is the waste below which the arena is never compacted.
	minArenaWaste = 4096
)

// idArena holds the IDs longer than inlineMax of a Run's entries.
type idArena struct {
	b []byte
	// dead counts the bytes of b that no entry names any more.
	dead int
}

// key returns the key of id, adding its bytes to the arena when they do
// not fit in place.
func (a *idArena) key(id resource.ID) idKey {
	var k idKey
	if len(id) <= inlineMax {
		copy(k[:], id)
		k[inlineMax] = byte(len(id))
		return k
	}
	binary.LittleEndian.PutUint64(k[0:8], uint64(len(a.b)))
	binary.LittleEndian.PutUint32(k[8:12], uint32(len(id)))
	k[inlineMax] = longTag
	a.b = append(a.b, id...)
	return k
}

// long reports whether k's ID is in the arena, and where.
func (k *idKey) long() (off, n int, ok bool) {
	if k[inlineMax]&longTag == 0 {
		return 0, 0, false
	}
	return int(binary.LittleEndian.Uint64(k[0:8])), int(binary.LittleEndian.Uint32(k[8:12])), true
}

// empty reports whether k is the empty ID (an entry swept in a pass).
func (k *idKey) empty() bool { return k[inlineMax] == 0 }

// view returns k's ID sharing its bytes (see the top of this file): valid
// while k and the arena are unchanged, never to be kept.
func (a *idArena) view(k *idKey) resource.ID {
	if off, n, ok := k.long(); ok {
		return unsafe.String(&a.b[off], n)
	}
	return unsafe.String(&k[0], int(k[inlineMax]))
}

// clone returns k's ID as a string of its own, to keep.
func (a *idArena) clone(k *idKey) resource.ID {
	return strings.Clone(a.view(k))
}

// drop counts the bytes of k's ID as dead: no entry names it any more.
func (a *idArena) drop(k *idKey) {
	if _, n, ok := k.long(); ok {
		a.dead += n
	}
}

// compact rewrites the arena with the IDs of entries alone, in their
// order, once more than half of it is dead: the arena's memory stays
// within twice the bytes of the long IDs named (plus minArenaWaste).
// Every entry that names an ID in the arena must be in entries.
func (a *idArena) compact(entries []entry) {
	if a.dead <= minArenaWaste || a.dead <= len(a.b)/2 {
		return
	}
	b := make([]byte, 0, len(a.b)-a.dead)
	for i := range entries {
		k := &entries[i].key
		if off, n, ok := k.long(); ok {
			binary.LittleEndian.PutUint64(k[0:8], uint64(len(b)))
			b = append(b, a.b[off:off+n]...)
		}
	}
	a.b, a.dead = b, 0
}
