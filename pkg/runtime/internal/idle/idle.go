// Package idle is how the Runtime's parts tell the quiescence check
// (runtimetest.Settle) that something happened that may have made the
// Runtime idle: a Controller came back to EventCh or ended a pass, a
// QController item is done, a kind watch routed a batch. The check
// re-reads the Runtime's activity when notified, never by polling.
package idle

import (
	"sync"
	"sync/atomic"
)

// Notifier wakes the current waiters at each [Notifier.Ping]. Without a
// waiter a ping costs one atomic load. The zero value is ready to use; all
// methods are safe for concurrent use.
type Notifier struct {
	waiters atomic.Int32
	mu      sync.Mutex
	// ch is closed by the next ping; protected by mu.
	ch chan struct{}
}

// Ping wakes the current waiters, if any.
func (n *Notifier) Ping() {
	if n.waiters.Load() == 0 {
		return
	}
	n.mu.Lock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}

// Subscribe registers a waiter and returns the channel the next ping
// closes, and the function that unregisters the waiter.
func (n *Notifier) Subscribe() (<-chan struct{}, func()) {
	n.waiters.Add(1)
	return n.Renew(), func() { n.waiters.Add(-1) }
}

// Renew returns the channel the next ping closes; a waiter calls it after
// each wake-up, before it checks again.
func (n *Notifier) Renew() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}
