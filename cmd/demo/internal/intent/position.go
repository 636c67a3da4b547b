package intent

import (
	"bytes"
	"unicode/utf8"
)

// lineCol converts a byte offset of data to a 1-based line and a 1-based
// column counted in characters. An offset past the end is the position just
// after the last character.
func lineCol(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[lineStart:]) + 1
}
