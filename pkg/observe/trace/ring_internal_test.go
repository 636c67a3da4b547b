package trace

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestAPutWritesTheFirstThreeLinesOfItsSlot: a slot is a whole number of
// cache lines, a default ring's slots start on a line, and what Put writes
// (the slot's lock and the record's fields up to Duration, the last that
// Head sets) lies within a slot's first three lines — so a Put touches
// three lines of the ring whatever its slot's index, not three or four.
func TestAPutWritesTheFirstThreeLinesOfItsSlot(t *testing.T) {
	var s slot
	assert.Zero(t, unsafe.Sizeof(s)%cacheLine, "a slot is whole lines")
	head := unsafe.Offsetof(s.ev) + unsafe.Offsetof(s.ev.Duration) + unsafe.Sizeof(s.ev.Duration)
	assert.LessOrEqual(t, head, uintptr(3*cacheLine), "the lock and the head in three lines")
	r := NewRing(DefaultSize)
	for _, i := range []int{0, 1, 2, 3, DefaultSize - 1} {
		assert.Zero(t, uintptr(unsafe.Pointer(&r.slots[i]))%cacheLine, "slot %d starts on a line", i)
	}
}
