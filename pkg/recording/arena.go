package recording

import "unsafe"

// idArenaChunk is the size of a chunk of an idArena.
const idArenaChunk = 64 << 10

// maxArenaID is the longest ID an idArena holds (a longer one's change
// keeps its resource instead).
const maxArenaID = 1<<16 - 1

// arenaRef is an ID in an idArena: its chunk (the top 24 bits), its
// offset in it (the next 24) and its length (the low 16).
type arenaRef uint64

// idArena holds strings in chunks of bytes, without a pointer per string
// (the collector scans none of it): a string never straddles two chunks.
// Growing it copies nothing it holds. tail is the last chunk (n of its
// bytes used), base the arenaRef bits of its number.
type idArena struct {
	chunks [][]byte
	tail   []byte
	n      int
	base   arenaRef
}

// put copies s (at most maxArenaID bytes) into the arena.
func (a *idArena) put(s string) arenaRef {
	return a.putBytes(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// putBytes copies s (at most maxArenaID bytes) into the arena.
func (a *idArena) putBytes(s []byte) arenaRef {
	if a.n+len(s) > len(a.tail) {
		a.grow()
	}
	ref := a.base | arenaRef(a.n)<<16 | arenaRef(len(s))
	a.n += copy(a.tail[a.n:], s)
	return ref
}

// grow starts a new chunk.
func (a *idArena) grow() {
	a.tail, a.n = make([]byte, idArenaChunk), 0
	a.base = arenaRef(len(a.chunks)) << 40
	a.chunks = append(a.chunks, a.tail)
}

// get returns the string ref names (a copy).
func (a *idArena) get(ref arenaRef) string { return string(a.bytes(ref)) }

// bytes returns the bytes of the string ref names (the arena's own).
func (a *idArena) bytes(ref arenaRef) []byte {
	off := int(ref >> 16 & (1<<24 - 1))
	return a.chunks[ref>>40][off : off+int(ref&(1<<16-1))]
}

// reset empties the arena, keeping its first chunk.
func (a *idArena) reset() {
	if len(a.chunks) > 0 {
		a.chunks, a.tail, a.n, a.base = a.chunks[:1], a.chunks[0], 0, 0
	}
}
