// Package changelog is a Controller's change log: the IDs of its inputs'
// changes that the Runtime routed to it since its last pass, so that a
// pass (the generic transform and cleanup Controllers') costs what changed
// rather than every input. The Runtime keeps one [Log] per Controller, fed
// by its routing, and its controller.Runtime implements [Source]; a
// Controller whose Runtime does not (a Runtime of one's own, a test's) makes
// every pass a full one.
//
// The log is bounded: past its limit it forgets the IDs and says "full"
// (a full pass needed), as it does after a Run's (re)start and a re-list of
// an input kind. A Controller may raise the limit to what it would process
// incrementally anyway ([Sizer]): a controller with a million inputs is
// not sent back to full passes by a backlog that is a small part of them. A full batch tells the Controller to list its inputs; a
// batch that is not full holds every change routed since the previous
// batch (an ID may appear more than once).
package changelog

import (
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// DefaultLimit is the number of IDs a Log holds before it overflows into
// "full": past it, a full pass costs no more than the log would.
const DefaultLimit = 1 << 16

// keep is the capacity of an ID slice always kept across batches. A
// larger one is kept while the batch handed back used at least a quarter
// of it (changes keep coming at that rate: the next batch reuses the
// storage instead of growing a slice again by doublings), and released
// otherwise (a burst that is over), so that a batch holds at most four
// times the IDs of its previous use.
const keep = 4096

// Source is what a controller.Runtime implements when its Runtime keeps
// the Controller's change log. TakeChanges returns the changes routed
// since the previous call and starts a new batch; reuse is the previous
// batch (or nil), whose storage the new one reuses: the caller no longer
// reads it. The call must come after the wake-up (ReconcileEvent) was
// taken and before the pass reads its inputs: a change in the batch is
// then visible to the pass's reads (the Runtime raises the Controller's
// read floor before it logs a change).
type Source interface {
	TakeChanges(reuse *Batch) *Batch
}

// Sizer is what a Source also implements when its Controller may size
// its log: SizeChanges(n) makes the log hold up to n IDs before it
// overflows, never fewer than its own limit (DefaultLimit for the
// Runtime's). A Controller that makes a pass a full one past n changes
// anyway (the transform: past half its inputs) asks for n, so that the
// log overflows only where the pass would have been full; the log's memory
// then grows with the Controller's inputs (an ID is a string header that
// shares the resource's storage).
type Sizer interface {
	SizeChanges(n int)
}

// Batch is the changes of one pass: Full, or the IDs per kind.
type Batch struct {
	// Full says the IDs are not known: the pass must read every input
	// (after a (re)start, a re-list, or an overflow).
	Full  bool
	kinds []kindIDs
	n     int
}

// kindIDs are the IDs of one kind's changes.
type kindIDs struct {
	kind resource.KindKey
	ids  []resource.ID
}

// IDs returns the IDs of the changes of kind in the batch (unsorted, maybe
// repeated); nil when the batch is full or has none.
func (b *Batch) IDs(kind resource.KindKey) []resource.ID {
	if b == nil || b.Full {
		return nil
	}
	for i := range b.kinds {
		if b.kinds[i].kind == kind {
			return b.kinds[i].ids
		}
	}
	return nil
}

// Len returns the number of IDs in the batch.
func (b *Batch) Len() int { return b.n }

// reset empties b for reuse, releasing burst-sized storage.
func (b *Batch) reset() {
	for i := range b.kinds {
		k := &b.kinds[i]
		if cap(k.ids) > keep && len(k.ids) < cap(k.ids)/4 {
			k.ids = nil
			continue
		}
		clear(k.ids)
		k.ids = k.ids[:0]
	}
	b.Full, b.n = false, 0
}

// add appends id of kind.
func (b *Batch) add(kind resource.KindKey, id resource.ID) {
	b.n++
	for i := range b.kinds {
		if b.kinds[i].kind == kind {
			b.kinds[i].ids = append(b.kinds[i].ids, id)
			return
		}
	}
	b.kinds = append(b.kinds, kindIDs{kind: kind, ids: []resource.ID{id}})
}

// overflow forgets the IDs: the batch is full.
func (b *Batch) overflow() {
	b.reset()
	b.Full = true
}

// Log is one Controller's change log. Its methods are safe for concurrent
// use: the router adds, the Controller's Run takes.
type Log struct {
	mu    sync.Mutex
	limit int
	// base is the limit New set: SetLimit never goes below it.
	base int
	cur  *Batch
}

// New returns a log that overflows past limit IDs (DefaultLimit when
// limit ≤ 0). It starts full: a Controller's first pass reads everything.
func New(limit int) *Log {
	if limit <= 0 {
		limit = DefaultLimit
	}
	return &Log{limit: limit, base: limit, cur: &Batch{Full: true}}
}

// SetLimit makes the log overflow past max(n, the limit New set) IDs,
// from the next change added on (see [Sizer]).
func (l *Log) SetLimit(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.limit = max(n, l.base)
}

// Add logs a change of the resource id of kind. Call it after the
// Controller's read floor is raised to the change's revision, and before
// the Controller is woken up.
func (l *Log) Add(kind resource.KindKey, id resource.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.cur
	switch {
	case b.Full:
	case b.n >= l.limit:
		b.overflow()
	default:
		b.add(kind, id)
	}
}

// MarkFull makes the current batch full: the Controller's next pass reads
// every input (a (re)start of its Run, a re-list of an input kind).
func (l *Log) MarkFull() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.overflow()
}

// Take returns the current batch and starts a new one, with reuse's
// storage when reuse is not nil (see [Source]).
func (l *Log) Take(reuse *Batch) *Batch {
	if reuse == nil {
		reuse = &Batch{}
	}
	reuse.reset()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.cur
	l.cur = reuse
	return b
}
