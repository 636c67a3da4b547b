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
	mu sync.Mutex
	// slots maps each input that has a record to its slot in recs (a
	// small map value: the map's groups stay small).
	slots map[resource.ID]int32
	// recs holds the records; a free slot (in free) has an empty id.
	recs []inputRec
	free []int32
	// inputOf maps every output and retired output of the records to its
	// input.
	inputOf map[resource.ID]resource.ID
	// lookups, when not nil, counts the lookups of inputs in slots (for
	// tests).
	lookups *int
}

// ref is where a step of a Reconcile found its input's record (its slot +
// 1; 0: not found): the next steps of the same Reconcile pass it back
// instead of looking the input up again. It is a hint, checked before use:
// the record may have gone, and its slot be another input's since.
type ref int32

// inputRec is what inputs holds of one input.
type inputRec struct {
	id        resource.ID // empty: a free slot
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
	return &inputs{slots: map[resource.ID]int32{}, inputOf: map[resource.ID]resource.ID{}}
}

// findLocked returns the slot of id's record, trying at first, or -1 when
// id has none; x.mu must be held.
func (x *inputs) findLocked(id resource.ID, at ref) int32 {
	if i := int32(at) - 1; i >= 0 && int(i) < len(x.recs) && x.recs[i].id == id {
		return i
	}
	if x.lookups != nil {
		*x.lookups++
	}
	if i, ok := x.slots[id]; ok {
		return i
	}
	return -1
}

// getLocked returns id's record (the zero record when it has none) and
// its slot (-1: none), trying at first; x.mu must be held.
func (x *inputs) getLocked(id resource.ID, at ref) (inputRec, int32) {
	i := x.findLocked(id, at)
	if i < 0 {
		return inputRec{}, -1
	}
	return x.recs[i], i
}

// putLocked stores the record r of id in slot i (-1: a new slot), or
// frees the slot when r holds nothing, and returns where r is (0: gone);
// x.mu must be held.
func (x *inputs) putLocked(id resource.ID, i int32, r inputRec) ref {
	if !r.hasOutput && len(r.retired) == 0 && r.mark == (mark{}) {
		if i >= 0 {
			delete(x.slots, id)
			x.recs[i] = inputRec{}
			x.free = append(x.free, i)
		}
		return 0
	}
	r.id = id
	if i < 0 {
		if n := len(x.free); n > 0 {
			i = x.free[n-1]
			x.free = x.free[:n-1]
		} else {
			i = int32(len(x.recs))
			x.recs = append(x.recs, inputRec{})
		}
		x.slots[id] = i
	}
	x.recs[i] = r
	return ref(i + 1)
}

// claim records outID as the output of inID, retiring the previous one,
// and returns whether inID had an output and the outputs it retired (to
// destroy), and where its record is. at is where the Reconcile found the
// record before (0: unknown). Claiming the output an input already has
// (every Reconcile of an input that maps to the same output) only reads.
func (x *inputs) claim(at ref, inID, outID resource.ID) (known bool, retired []resource.ID, now ref) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, i := x.getLocked(inID, at)
	known = r.hasOutput
	if known && r.output == outID {
		if in, ok := x.inputOf[outID]; !ok || in != inID {
			x.inputOf[outID] = inID
		}
		if len(r.retired) == 0 {
			return known, nil, ref(i + 1)
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
	now = x.putLocked(inID, i, r)
	return known, slices.Clone(r.retired), now
}

// all appends the output and the retired outputs of inID to ids and
// returns the result.
func (x *inputs) all(inID resource.ID, ids []resource.ID) []resource.ID {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, _ := x.getLocked(inID, 0)
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
	r, _ := x.getLocked(inID, 0)
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
	if r, i := x.getLocked(inID, 0); i >= 0 {
		if r.hasOutput && r.output == outID {
			r.output, r.hasOutput = "", false
		}
		r.retired = slices.DeleteFunc(r.retired, func(id resource.ID) bool { return id == outID })
		if len(r.retired) == 0 {
			r.retired = nil
		}
		x.putLocked(inID, i, r)
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
		r, i := x.getLocked(inID, 0)
		r.output, r.hasOutput = ids[0], true
		r.retired = append(r.retired, ids[1:]...)
		if len(r.retired) == 0 {
			r.retired = nil
		}
		x.putLocked(inID, i, r)
		for _, id := range ids {
			x.inputOf[id] = inID
		}
	}
}

// start returns the input's generation, to pass to finish, whether the
// input, at created and version, was fully processed since its last
// wake-up by MapInput (so that there is nothing to do), and where its
// record is, for the next steps of the Reconcile (claim, finish).
func (x *inputs) start(id resource.ID, created int64, version resource.Version) (gen uint64, skip bool, at ref) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := x.findLocked(id, 0)
	if i < 0 {
		return 0, false, 0
	}
	m := &x.recs[i].mark
	return m.gen, m.done && m.created == created && m.version.Equal(version), ref(i + 1)
}

// processed reports whether the input md, at its creation time and
// version, was fully processed since its last wake-up by MapInput: what
// start reports as skip, for the Runtime's routing (processed.Func).
func (x *inputs) processed(md *resource.Metadata) bool {
	id, created, version := md.ID(), md.Created().UnixNano(), md.Version()
	x.mu.Lock()
	defer x.mu.Unlock()
	i := x.findLocked(id, 0)
	if i < 0 {
		return false
	}
	m := &x.recs[i].mark
	return m.done && m.created == created && m.version.Equal(version)
}

// finish records that the input, at created and version, was fully
// processed by a Reconcile that started at generation gen; nothing is
// recorded when a MapInput woke the input up since. at is where the
// Reconcile last found the input's record (0: unknown).
func (x *inputs) finish(at ref, id resource.ID, created int64, version resource.Version, gen uint64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i := x.findLocked(id, at)
	if i >= 0 {
		if m := &x.recs[i].mark; m.gen == gen {
			*m = mark{created: created, version: version, gen: gen, done: true}
		}
		return
	}
	if gen == 0 { // no record: none was woken since the start
		x.putLocked(id, -1, inputRec{mark: mark{created: created, version: version, done: true}})
	}
}

// wake records a MapInput wake-up of the input: its next Reconcile runs.
func (x *inputs) wake(id resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	r, i := x.getLocked(id, 0)
	r.mark = mark{gen: r.mark.gen + 1}
	x.putLocked(id, i, r)
}

// gone drops what is known of the processing of an input that is gone
// (its outputs stay known until they are destroyed). (Only a Reconcile of
// the input calls it, and no other Reconcile of the input runs then: a
// wake-up dropped with it leaves the next Reconcile to run in full.)
func (x *inputs) gone(id resource.ID) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r, i := x.getLocked(id, 0); i >= 0 {
		r.mark = mark{}
		x.putLocked(id, i, r)
	}
}
