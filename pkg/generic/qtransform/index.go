package qtransform

import (
	"slices"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// index remembers which outputs the controller wrote for which inputs (all
// IDs: inputs live in one kind, outputs in another), so that it finds the
// outputs of an input that is gone without mapping it, and the input of an
// output without UnmapMetadataFunc. It is safe for concurrent use
// (Reconcile and MapInput run in parallel for different pointers).
type index struct {
	mu sync.Mutex
	// outputs maps an input to the output written for it.
	outputs map[resource.ID]resource.ID
	// retired maps an input to the outputs it no longer maps to and that
	// are not destroyed yet.
	retired map[resource.ID][]resource.ID
	// inputOf maps every output of outputs and retired to its input.
	inputOf map[resource.ID]resource.ID
}

func newIndex() *index {
	return &index{
		outputs: map[resource.ID]resource.ID{},
		retired: map[resource.ID][]resource.ID{},
		inputOf: map[resource.ID]resource.ID{},
	}
}

// claim records outID as the output of inID, retiring the previous one,
// and returns whether inID had an output and the outputs it retired (to
// destroy). Claiming the output an input already has (every Reconcile of
// an input that maps to the same output) only reads.
func (x *index) claim(inID, outID resource.ID) (known bool, retired []resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old, known := x.outputs[inID]
	switch {
	case known && old == outID:
		if in, ok := x.inputOf[outID]; !ok || in != inID {
			x.inputOf[outID] = inID
		}
	case known:
		x.retired[inID] = append(x.retired[inID], old)
		fallthrough
	default:
		x.outputs[inID] = outID
		x.inputOf[outID] = inID
	}
	if len(x.retired) == 0 {
		return known, nil
	}
	// An output the input maps to again is its output, no longer a
	// retired one: destroyed as retired, it would be forgotten once written
	// anew.
	x.unretireLocked(inID, outID)
	return known, slices.Clone(x.retired[inID])
}

// all appends the output and the retired outputs of inID to ids and
// returns the result.
func (x *index) all(inID resource.ID, ids []resource.ID) []resource.ID {
	x.mu.Lock()
	defer x.mu.Unlock()
	if id, ok := x.outputs[inID]; ok {
		ids = append(ids, id)
	}
	return append(ids, x.retired[inID]...)
}

// input returns the input of the output outID, if known.
func (x *index) input(outID resource.ID) (resource.ID, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok := x.inputOf[outID]
	return id, ok
}

// forget removes the output outID of the input inID (it is gone).
func (x *index) forget(inID, outID resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.outputs[inID] == outID {
		delete(x.outputs, inID)
	}
	x.unretireLocked(inID, outID)
	if x.inputOf[outID] == inID {
		delete(x.inputOf, outID)
	}
}

// load records the outputs found for each input (the first one as its
// output, the others as retired), as read from the existing outputs.
func (x *index) load(found map[resource.ID][]resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for inID, ids := range found {
		x.outputs[inID] = ids[0]
		x.retired[inID] = append(x.retired[inID], ids[1:]...)
		if len(x.retired[inID]) == 0 {
			delete(x.retired, inID)
		}
		for _, id := range ids {
			x.inputOf[id] = inID
		}
	}
}

// unretireLocked removes outID from the retired outputs of inID; x.mu
// must be held.
func (x *index) unretireLocked(inID, outID resource.ID) {
	if rest := slices.DeleteFunc(x.retired[inID], func(id resource.ID) bool { return id == outID }); len(rest) > 0 {
		x.retired[inID] = rest
	} else {
		delete(x.retired, inID)
	}
}
