package dependency

import (
	"slices"
	"sync/atomic"

	"github.com/resgraph/resgraph/pkg/controller"
)

// InputCount is what the router delivered through one declared input of a
// controller: a Controller's wake-ups (one per routed batch that concerns
// it), a QController's queued items (one per change).
type InputCount struct {
	Input  controller.Input
	Routed uint64
}

// counterLocked returns the delivery counter of the input in of the
// controller name, created on first use and kept across snapshots. The
// caller holds mu.
func (db *DB[H]) counterLocked(name string, in controller.Input) *atomic.Uint64 {
	byInput := db.routed[name]
	if byInput == nil {
		byInput = map[controller.Input]*atomic.Uint64{}
		db.routed[name] = byInput
	}
	c := byInput[in]
	if c == nil {
		c = new(atomic.Uint64)
		byInput[in] = c
	}
	return c
}

// InputCounts returns the delivery count of every input the named
// controller declares now (static, then dynamic, each sorted), counted
// since it was first declared.
func (db *DB[H]) InputCounts(name string) []InputCount {
	db.mu.Lock()
	defer db.mu.Unlock()

	rec := db.records[name]
	if rec == nil {
		return nil
	}
	out := make([]InputCount, 0, len(rec.Static)+len(rec.Dynamic))
	for _, list := range [][]controller.Input{rec.Static, rec.Dynamic} {
		start := len(out)
		for _, in := range list {
			out = append(out, InputCount{Input: in, Routed: db.counterLocked(name, in).Load()})
		}
		slices.SortFunc(out[start:], func(a, b InputCount) int { return a.Input.Compare(b.Input) })
	}
	return out
}

// Outputs returns the outputs the named controller declared.
func (db *DB[H]) Outputs(name string) []controller.Output {
	db.mu.Lock()
	defer db.mu.Unlock()

	rec := db.records[name]
	if rec == nil {
		return nil
	}
	return slices.Clone(rec.Outputs)
}
