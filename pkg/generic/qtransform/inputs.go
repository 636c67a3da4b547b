package qtransform

import (
	"slices"
	"sync"

	"github.com/resgraph/resgraph/pkg/resource"
)

// inputs is what the controller knows of each of its inputs, in one record
// per input, so that the steps of a Reconcile (is the input processed,
// which output does it have, record it processed) find it in one place:
//
//   - the outputs the controller wrote for it (all IDs: inputs live in one
//     kind, outputs in another): its output, and the outputs it no longer
//     maps to and that are not destroyed yet (retired), so that the
//     controller finds the outputs of an input that is gone without
//     mapping it, and — with the input of every output, in inputOf — the
//     input of an output without UnmapMetadataFunc;
//   - the input as it was when it was last fully processed (a mark), so
//     that a Reconcile of an input that has not changed since, and that no
//     mapped input woke up, returns at once. The typical case is the
//     controller's own write: adding its finalizer to an input changes the
//     input, and the Runtime queues it again. An input is identified by its
//     creation time and version (versions start over when an input is
//     created again). Every MapInput result bumps the input's generation
//     (wake-ups from extra mapped inputs and destroy-ready outputs must
//     run); a Reconcile records its work as done only if the generation
//     did not move while it ran.
//
// A record goes once the input has no output, no retired output and no
// mark. It is safe for concurrent use (Reconcile and MapInput run in
// parallel for different pointers).
type inputs struct {
	mu   sync.Mutex
	recs map[resource.ID]inputRec
	// inputOf maps every output and retired output of the records to its
	// input.
	inputOf map[resource.ID]resource.ID
}

// inputRec is what inputs holds of one input.
type inputRec struct {
	output    resource.ID
	hasOutput bool
	retired   []resource.ID
	mark      mark
}

// mark is what inputs remembers of the processing of one input.
type mark struct {
	created int64
	version resource.Version
	// gen counts the MapInput wake-ups of the input.
	gen uint64
	// done: the input was fully processed at created and version.
	done bool
}

func newInputs() *inputs {
	return &inputs{recs: map[resource.ID]inputRec{}, inputOf: map[resource.ID]resource.ID{}}
}

// putLocked stores the record of id, or drops it when it holds nothing;
// x.mu must be held.
func (x *inputs) putLocked(id resource.ID, r inputRec) {
	if !r.hasOutput && len(r.retired) == 0 && r.mark == (mark{}) {
		delete(x.recs, id)
		return
	}
	x.recs[id] = r
}

// claim records outID as the output of inID, retiring the previous one,
// and returns whether inID had an output and the outputs it retired (to
// destroy). Claiming the output an input already has (every Reconcile of
// an input that maps to the same output) only reads.
func (x *inputs) claim(inID, outID resource.ID) (known bool, retired []resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.recs[inID]
	known = r.hasOutput
	if known && r.output == outID {
		if in, ok := x.inputOf[outID]; !ok || in != inID {
			x.inputOf[outID] = inID
		}
		if len(r.retired) == 0 {
			return known, nil
		}
	} else {
		if known {
			r.retired = append(r.retired, r.output)
		}
		r.output, r.hasOutput = outID, true
		x.inputOf[outID] = inID
	}
	// An output the input maps to again is its output, no longer a
	// retired one: destroyed as retired, it would be forgotten once written
	// anew.
	r.retired = slices.DeleteFunc(r.retired, func(id resource.ID) bool { return id == outID })
	if len(r.retired) == 0 {
		r.retired = nil
	}
	x.putLocked(inID, r)
	return known, slices.Clone(r.retired)
}

// all appends the output and the retired outputs of inID to ids and
// returns the result.
func (x *inputs) all(inID resource.ID, ids []resource.ID) []resource.ID {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.recs[inID]
	if r.hasOutput {
		ids = append(ids, r.output)
	}
	return append(ids, r.retired...)
}

// has reports whether the input inID has an output or a retired output
// that is not destroyed yet.
func (x *inputs) has(inID resource.ID) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.recs[inID]
	return r.hasOutput || len(r.retired) > 0
}

// input returns the input of the output outID, if known.
func (x *inputs) input(outID resource.ID) (resource.ID, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok := x.inputOf[outID]
	return id, ok
}

// forget removes the output outID of the input inID (it is gone).
func (x *inputs) forget(inID, outID resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.recs[inID]; ok {
		if r.hasOutput && r.output == outID {
			r.output, r.hasOutput = "", false
		}
		r.retired = slices.DeleteFunc(r.retired, func(id resource.ID) bool { return id == outID })
		if len(r.retired) == 0 {
			r.retired = nil
		}
		x.putLocked(inID, r)
	}
	if x.inputOf[outID] == inID {
		delete(x.inputOf, outID)
	}
}

// load records the outputs found for each input (the first one as its
// output, the others as retired), as read from the existing outputs.
func (x *inputs) load(found map[resource.ID][]resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for inID, ids := range found {
		r := x.recs[inID]
		r.output, r.hasOutput = ids[0], true
		r.retired = append(r.retired, ids[1:]...)
		if len(r.retired) == 0 {
			r.retired = nil
		}
		x.putLocked(inID, r)
		for _, id := range ids {
			x.inputOf[id] = inID
		}
	}
}

// start returns the input's generation, to pass to finish, and whether the
// input, at created and version, was fully processed since its last
// wake-up by MapInput (so that there is nothing to do).
func (x *inputs) start(id resource.ID, created int64, version resource.Version) (gen uint64, skip bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.recs[id].mark
	return m.gen, m.done && m.created == created && m.version.Equal(version)
}

// processed reports whether the input md, at its creation time and
// version, was fully processed since its last wake-up by MapInput: what
// start reports as skip, for the Runtime's routing (processed.Func).
func (x *inputs) processed(md *resource.Metadata) bool {
	id, created, version := md.ID(), md.Created().UnixNano(), md.Version()
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.recs[id].mark
	return m.done && m.created == created && m.version.Equal(version)
}

// finish records that the input, at created and version, was fully
// processed by a Reconcile that started at generation gen; nothing is
// recorded when a MapInput woke the input up since.
func (x *inputs) finish(id resource.ID, created int64, version resource.Version, gen uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r := x.recs[id]; r.mark.gen == gen {
		r.mark = mark{created: created, version: version, gen: gen, done: true}
		x.putLocked(id, r)
	}
}

// wake records a MapInput wake-up of the input: its next Reconcile runs.
func (x *inputs) wake(id resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r := x.recs[id]
	r.mark = mark{gen: r.mark.gen + 1}
	x.putLocked(id, r)
}

// gone drops what is known of the processing of an input that is gone
// (its outputs stay known until they are destroyed). (Only a Reconcile of
// the input calls it, and no other Reconcile of the input runs then: a
// wake-up dropped with it leaves the next Reconcile to run in full.)
func (x *inputs) gone(id resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, ok := x.recs[id]; ok {
		r.mark = mark{}
		x.putLocked(id, r)
	}
}
