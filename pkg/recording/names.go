package recording

import "slices"

// writerNames numbers the writers of a window's changes (an entry holds
// its writer's number, no pointer): number 0 is none, n is list[n-1].
// The name numbered last is found again by its bytes' address (a batch's
// changes are mostly one controller's, its name one string).
type writerNames struct {
	list []string
	// last is the number of the name found last (0: none).
	last uint16
}

// number returns the number of the writer s (0 for none), adding it.
func (n *writerNames) number(s string) uint16 {
	if s == "" {
		return 0
	}
	if n.last > 0 && sameData(n.list[n.last-1], s) {
		return n.last
	}
	i := slices.Index(n.list, s)
	if i < 0 {
		n.list = append(n.list, s)
		i = len(n.list) - 1
	}
	n.last = uint16(i + 1)
	return n.last
}

// of returns the writer numbered i ("" for 0).
func (n *writerNames) of(i uint16) string {
	if i == 0 {
		return ""
	}
	return n.list[i-1]
}

// reset forgets every name.
func (n *writerNames) reset() { n.list, n.last = n.list[:0], 0 }
