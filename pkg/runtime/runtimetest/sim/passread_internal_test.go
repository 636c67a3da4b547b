package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRecording_APassReadsWhereItsNewestReadSawTheState: a recorded
// commit's pass read the state where its newest read (of those before
// the commit) saw it, when no kind it read changed between its reads;
// otherwise (a cache read behind the others), and without passes (a
// version-3 recording), where its first read did. A pass's commits are
// those of its controller (and item) in order.
func TestRecording_APassReadsWhereItsNewestReadSawTheState(t *testing.T) {
	as, bs, ptr := passKinds()
	changes := []recording.Change{
		{Revision: 1, By: recording.ByOutside, Pointer: ptr("As.sim.test", "a")},
		{Revision: 2, By: recording.ByOutside, Pointer: ptr("Bs.sim.test", "b")},
		// w's first pass: A at 1, B at 2, then A at 3 after its first
		// commit (no A or B changed in between).
		{Revision: 3, By: recording.ByController, Writer: "w", Pointer: ptr("Cs.sim.test", "c"), Read: 1},
		{Revision: 4, By: recording.ByController, Writer: "w", Pointer: ptr("Cs.sim.test", "d"), Read: 1},
		{Revision: 5, By: recording.ByOutside, Pointer: ptr("As.sim.test", "a")},
		{Revision: 6, By: recording.ByOutside, Pointer: ptr("Bs.sim.test", "b")},
		// w's second pass: A at 4 (before a's change at 5), B at 6.
		{Revision: 7, By: recording.ByController, Writer: "w", Pointer: ptr("Cs.sim.test", "c"), Read: 4},
	}
	rec := &recording.Recording{Changes: changes, Passes: []recording.Pass{
		{Controller: "w", Commits: 2, Reads: []recording.PassRead{{Index: 0, Revision: 1, Kind: as}, {Index: 1, Revision: 2, Kind: bs}, {Index: 2, Revision: 3, Kind: as}}},
		{Controller: "w", Commits: 0, Reads: []recording.PassRead{{Index: 0, Revision: 4, Kind: as}}},
		{Controller: "w", Commits: 1, Reads: []recording.PassRead{{Index: 0, Revision: 4, Kind: as}, {Index: 1, Revision: 6, Kind: bs}}},
	}}
	assert.Equal(t, []uint64{2, 3, 4}, lastReads(rec), "the newest read before each commit; the first where A changed after its read")
	rec.Passes = nil
	assert.Equal(t, []uint64{1, 1, 4}, lastReads(rec), "without passes: each commit's first read")
}

// TestRecording_APassWhoseCacheWasBehindReadsWhereItsOlderReadSawTheState:
// a pass that read A at 3 and B at 1 (its cache of B behind), with B
// changed at 2 and A not changed between 1 and 3, saw the state at 1: the
// replay opens it there, where both kinds are as it read them.
func TestRecording_APassWhoseCacheWasBehindReadsWhereItsOlderReadSawTheState(t *testing.T) {
	as, bs, ptr := passKinds()
	changes := []recording.Change{
		{Revision: 1, By: recording.ByOutside, Pointer: ptr("Bs.sim.test", "b")},
		{Revision: 2, By: recording.ByOutside, Pointer: ptr("Bs.sim.test", "b")},
		{Revision: 3, By: recording.ByOutside, Pointer: ptr("Cs.sim.test", "x")},
		{Revision: 4, By: recording.ByController, Writer: "w", Pointer: ptr("Cs.sim.test", "c"), Read: 3},
	}
	rec := &recording.Recording{Changes: changes, Passes: []recording.Pass{
		{Controller: "w", Commits: 1, Reads: []recording.PassRead{{Index: 0, Revision: 3, Kind: as}, {Index: 1, Revision: 1, Kind: bs}}},
	}}
	assert.Equal(t, []uint64{1}, lastReads(rec), "where B was as read, and A too")
	changes[2].Pointer = ptr("As.sim.test", "a") // A changed at 3: no one state
	assert.Equal(t, []uint64{3}, lastReads(rec), "no one state: the first read")
}

// passKinds returns the kinds A and B of the pass tests, and a pointer
// maker.
func passKinds() (as, bs resource.KindKey, ptr func(typ, id string) resource.PointerKey) {
	as = resource.KindOf(resource.NewKind("sim", "As.sim.test"))
	bs = resource.KindOf(resource.NewKind("sim", "Bs.sim.test"))
	ptr = func(typ, id string) resource.PointerKey {
		return resource.PointerOf(resource.NewPointer("sim", typ, id))
	}
	return as, bs, ptr
}

// TestRecording_AnItemsRunReadsWhereItsOwnResourcesWereAsItReadThem: the
// run of the QController item x read A at 1 and B at 3 (its B x created
// at 3); A changed at 2, but only another item's A (y). No state is where
// both kinds were as read; the item's own resources were as read at 3:
// the replay opens the run there (at 1, its first read, it would find no
// B x). A Controller's pass reading the same has no such state (its first
// read), nor an item's whose own A changed at 2.
func TestRecording_AnItemsRunReadsWhereItsOwnResourcesWereAsItReadThem(t *testing.T) {
	as, bs, ptr := passKinds()
	item := ptr("As.sim.test", "x")
	changes := []recording.Change{
		{Revision: 1, By: recording.ByOutside, Pointer: ptr("As.sim.test", "x")},
		{Revision: 2, By: recording.ByOutside, Pointer: ptr("As.sim.test", "y")},
		{Revision: 3, By: recording.ByOutside, Pointer: ptr("Bs.sim.test", "x")},
		{Revision: 4, By: recording.ByController, Writer: "q", Item: item, Pointer: ptr("Cs.sim.test", "x"), Read: 1},
	}
	rec := &recording.Recording{Changes: changes, Passes: []recording.Pass{
		{Controller: "q", Item: item, Commits: 1, Reads: []recording.PassRead{{Index: 0, Revision: 1, Kind: as}, {Index: 1, Revision: 3, Kind: bs}}},
	}}
	assert.Equal(t, []uint64{3}, lastReads(rec), "where the item's own A and B were as read")
	changes[1].Pointer = ptr("As.sim.test", "x")
	assert.Equal(t, []uint64{1}, lastReads(rec), "its own A changed at 2: the first read")
	changes[1].Pointer = ptr("As.sim.test", "y")
	changes[3].Item, rec.Passes[0].Item = resource.PointerKey{}, resource.PointerKey{}
	assert.Equal(t, []uint64{1}, lastReads(rec), "a Controller's pass: the first read")
}

// TestRecording_AnIncrementalPassOpensWhereItsBatchCame: a pass of an
// incremental Controller took its batch of changes at revision 1 (the
// change of a) and read at 2 (b had changed too, routed after it took
// the batch): the replay opens it at 1, so that its batch is a's change
// alone, and b's is the next pass's. Without a batch (a full one, or a
// version-4 file) it opens where it read.
func TestRecording_AnIncrementalPassOpensWhereItsBatchCame(t *testing.T) {
	as, _, ptr := passKinds()
	changes := []recording.Change{
		{Revision: 1, By: recording.ByOutside, Pointer: ptr("As.sim.test", "a")},
		{Revision: 2, By: recording.ByOutside, Pointer: ptr("As.sim.test", "b")},
		{Revision: 3, By: recording.ByController, Writer: "w", Pointer: ptr("As.sim.test", "a"), Read: 2},
	}
	rec := &recording.Recording{Changes: changes, Passes: []recording.Pass{
		{Controller: "w", Commits: 1, Batch: 1, Reads: []recording.PassRead{{Index: 0, Revision: 2, Kind: as}}},
	}}
	assert.Equal(t, []uint64{1}, lastReads(rec), "where its batch came")
	rec.Passes[0].Batch = 0
	assert.Equal(t, []uint64{2}, lastReads(rec), "where it read")
}
