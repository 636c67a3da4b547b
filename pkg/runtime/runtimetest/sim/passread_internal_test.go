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
	as := resource.KindOf(resource.NewKind("sim", "As.sim.test"))
	bs := resource.KindOf(resource.NewKind("sim", "Bs.sim.test"))
	ptr := func(typ, id string) resource.PointerKey {
		return resource.PointerOf(resource.NewPointer("sim", typ, id))
	}
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
