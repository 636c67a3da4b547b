// Package batchpool is the seam through which the Runtime's router hands
// the event batches of its whole-kind aggregated watches back to the state
// that built them, so that a state of this module reuses a batch's memory
// instead of allocating one per delivery.
//
// The public contract of WatchKindAggregated gives each batch to the
// receiver, which may keep it; that stays the contract for every other
// consumer. A batch is reused only when the watch's caller bound a Pool to
// the very channel it passed (Bind), which only the router does: a state
// that wraps another and passes the batches on through a channel of its
// own (a different channel) therefore never sees the pool, and every
// batch it receives is its own, as the contract says.
//
// A bound watch's batches also carry fewer bookmarks: of the events that
// carry one under the contract, only the last of each batch does (the
// router resumes from, and reports progress at, a batch's last bookmark
// and reads no other), so that a state makes one bookmark per batch
// rather than one per event.
//
// Ownership moves with the batch: the state owns a batch from Get until it
// sends it; the receiver owns it from the receive until it calls Put, and
// does not read or write it after Put. A batch is in at most one of three
// places at a time — the state building it, the channel or receiver
// routing it, the pool — so two consumers never see one batch.
package batchpool

import (
	"context"

	"github.com/resgraph/resgraph/pkg/state"
)

// Keep is the most events a batch may have room for to be kept by Put
// (twice as many as inmem's watchers claim at once, for the size class's
// rounding and a coalesced destroy and create); a larger batch (a
// bootstrap of a large kind, a long catch-up) is left to the collector,
// so that a pool holds at most its size times Keep events.
const Keep = 512

// Pool is a bounded free list of emptied event batches. Its methods are
// safe for concurrent use, and a nil *Pool is an empty pool that keeps
// nothing.
type Pool struct {
	free chan []state.Event
}

// New returns a pool that keeps up to n batches (n ≥ 1).
func New(n int) *Pool {
	return &Pool{free: make(chan []state.Event, max(n, 1))}
}

// Get returns an empty batch that was handed back, with its capacity, or
// nil when none is kept. It never blocks. The caller owns the batch.
func (p *Pool) Get() []state.Event {
	if p == nil {
		return nil
	}
	select {
	case b := <-p.free:
		return b
	default:
		return nil
	}
}

// Put hands batch b back, as it was received (its length covers every
// event the state put in it): its events are cleared (no resource stays
// referenced) and it is kept when the pool has room and its capacity is at
// most Keep, dropped otherwise. It never blocks. The caller gives up b:
// it must not read or write it after Put.
func (p *Pool) Put(b []state.Event) {
	if p == nil || b == nil || cap(b) > Keep {
		return
	}
	clear(b)
	select {
	case p.free <- b[:0]:
	default:
	}
}

type bindingKey struct{}

// binding is a pool and the channel whose batches it recycles.
type binding struct {
	ch   chan<- []state.Event
	pool *Pool
}

// Bind returns a context for a WatchKindAggregated call whose channel is
// ch: a state of this module that receives it builds the batches it sends
// on ch from p, and the caller hands each batch back with p.Put once it is
// done with it.
func Bind(ctx context.Context, ch chan<- []state.Event, p *Pool) context.Context {
	return context.WithValue(ctx, bindingKey{}, binding{ch: ch, pool: p})
}

// For returns the pool bound by Bind to ch in ctx, or nil when ctx binds
// none to this channel (the batches sent on ch are then the receiver's).
func For(ctx context.Context, ch chan<- []state.Event) *Pool {
	b, ok := ctx.Value(bindingKey{}).(binding)
	if !ok || ch == nil || b.ch != ch {
		return nil
	}
	return b.pool
}
