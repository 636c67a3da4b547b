package sim

import (
	"runtime"
	"strings"
)

// allStacks returns the stacks of every goroutine of the process.
func allStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Split(strings.TrimSpace(string(buf[:n])), "\n\n")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// bubbleOf returns the bubble a goroutine header names ("goroutine 7
// [chan receive, synctest bubble 3]:" → "3"), and its ID.
func bubbleOf(stack string) (id, bubble string) {
	header, _, _ := strings.Cut(stack, "\n")
	rest, ok := strings.CutPrefix(header, "goroutine ")
	if !ok {
		return "", ""
	}
	id, rest, _ = strings.Cut(rest, " ")
	if _, b, ok := strings.Cut(rest, "synctest bubble "); ok {
		bubble, _, _ = strings.Cut(b, "]")
		bubble, _, _ = strings.Cut(bubble, ",")
	}
	return id, bubble
}

// myBubble returns the bubble of the calling goroutine ("" outside one).
func myBubble() string {
	buf := make([]byte, 256)
	n := runtime.Stack(buf, false)
	_, b := bubbleOf(string(buf[:n]))
	return b
}

// bubbleGoroutines returns the IDs of the goroutines of the caller's
// bubble.
func bubbleGoroutines() map[string]bool {
	mine := myBubble()
	out := map[string]bool{}
	for _, s := range allStacks() {
		if id, b := bubbleOf(s); b != "" && b == mine {
			out[id] = true
		}
	}
	return out
}

// leftGoroutines returns the stacks of the goroutines of the caller's
// bubble that are not in base.
func leftGoroutines(base map[string]bool) []string {
	mine := myBubble()
	var out []string
	for _, s := range allStacks() {
		if id, b := bubbleOf(s); b != "" && b == mine && !base[id] {
			out = append(out, s)
		}
	}
	return out
}

// goroutineReport returns the stacks of the caller's bubble's goroutines
// not in base (all of them when base is nil), for a failure's detail.
func goroutineReport(base map[string]bool) string {
	return strings.Join(leftGoroutines(base), "\n\n")
}
