package conformance

import "sync"

// callCounts counts calls per key (an ID, a pointer) for the example
// controllers. It is safe for concurrent use; the zero value is ready.
type callCounts[K comparable] struct {
	mu sync.Mutex
	n  map[K]int // guarded by mu: calls per key
}

// add counts one call for k and returns the count including it.
func (c *callCounts[K]) add(k K) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[K]int{}
	}
	c.n[k]++
	return c.n[k]
}

// get returns the number of calls counted for k.
func (c *callCounts[K]) get(k K) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// snapshot returns a copy of every count; it is never nil.
func (c *callCounts[K]) snapshot() map[K]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[K]int, len(c.n))
	for k, n := range c.n {
		out[k] = n
	}
	return out
}
