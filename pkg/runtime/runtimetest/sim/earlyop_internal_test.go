package sim

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
)

// TestRecording_AnOpIsTakenAtItsPlaceAmongTheCommitsWhateverTheTime: in
// the run that reproduces a recording, a recorded op whose time came
// before the run made the controllers' commits the recording has before
// it waits (and so does the step of time to it), unless nothing else is
// left; at its place it is taken first of all. Other runs take it when its
// time comes.
func TestRecording_AnOpIsTakenAtItsPlaceAmongTheCommitsWhateverTheTime(t *testing.T) {
	sc := &Scenario{Recording: &recording.Recording{}, MatchRecording: true}
	r := newRun(sc, plan{noFaults: true})
	defer r.cancel()
	r.ops = []op{{verb: verbDo, action: "flap", after: 2}}
	r.opIndex = []int{0}
	r.start = time.Now().Add(-time.Hour) // its time came long ago
	other := candidate{cat: catEngine, key: "3 pass c", text: "pass c", actor: "c"}

	cands := r.outsideCandidates([]candidate{other})
	assert.Len(t, cands, 2, "the op is a candidate once its time came")
	assert.Equal(t, []candidate{other}, keys(r.unheld(cands)), "the op waits for the commits before it")
	assert.Len(t, r.unheld(cands[1:]), 1, "unless nothing else is left")

	r.controllerCommits = 2
	cands = r.outsideCandidates([]candidate{other})
	assert.Equal(t, " op", cands[1].key, "at its place, the op is taken first of all")
	assert.Len(t, r.unheld(cands), 2)

	r.controllerCommits = 0
	r.p.noFaults = false // an explored run
	cands = r.outsideCandidates([]candidate{other})
	assert.Len(t, r.unheld(cands), 2, "an explored run takes the op when its time came")
}

// keys returns cands with only what tells them apart in a comparison.
func keys(cands []candidate) []candidate {
	out := make([]candidate, len(cands))
	for i, c := range cands {
		out[i] = candidate{cat: c.cat, key: c.key, text: c.text, actor: c.actor}
	}
	return out
}

// TestRecording_AControllerIsOfferedAWakeUpOnlyBetweenItsPasses: in the
// run that reproduces a recording, a wake-up is not offered to a
// Controller while one of its writes (or world reads) waits: its next
// pass would read where this one ends, not where the run is when it was
// offered. Another controller's wake-up is offered, and so is the
// Controller's once nothing else is left.
func TestRecording_AControllerIsOfferedAWakeUpOnlyBetweenItsPasses(t *testing.T) {
	sc := &Scenario{Recording: &recording.Recording{}, MatchRecording: true}
	r := newRun(sc, plan{noFaults: true})
	defer r.cancel()
	pass := candidate{cat: catEngine, key: "3 pass c", text: "pass c", actor: "c", pass: true}
	write := candidate{cat: catEngine, key: "3 write c x", text: "write x by c", actor: "c", write: true}
	other := candidate{cat: catEngine, key: "3 pass d", text: "pass d", actor: "d", pass: true}

	assert.Equal(t, []string{"write x by c", "pass d"}, texts(r.unheld([]candidate{pass, write, other})), "c is in a pass")
	assert.Equal(t, []string{"pass c", "pass d"}, texts(r.unheld([]candidate{pass, other})), "c is between passes")
	assert.Equal(t, []string{"write x by c", "pass d"}, texts(offersBetweenPasses([]candidate{pass, write, other})))
	read := candidate{cat: catEngine, key: "0 read k c", text: "world read k by c", actor: "c", read: &readWait{}}
	assert.False(t, slices.ContainsFunc(r.unheld([]candidate{pass, read}), func(c candidate) bool { return c.pass }), "c waits at a world read")
	assert.Len(t, r.unheld([]candidate{pass}), 1, "nothing else is left")
}

// texts returns the texts of cands.
func texts(cands []candidate) []string {
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.text
	}
	return out
}

// TestRecording_AWakeUpIsDeliveredBeforeTheRunMovesPastWhereItsPassRead:
// in the run that reproduces a recording, while a recorded commit was made
// by a pass that read the state the run is at now, the Runtime's
// deliveries go before the next commit's write (one of them may wake that
// pass, which would otherwise read after the next commit); otherwise the
// next commit's write goes first.
func TestRecording_AWakeUpIsDeliveredBeforeTheRunMovesPastWhereItsPassRead(t *testing.T) {
	sc := &Scenario{Recording: &recording.Recording{}, MatchRecording: true}
	r := newRun(sc, plan{noFaults: true})
	defer r.cancel()
	p, q := resource.PointerOf(resource.NewPointer("sim", "Cs.sim.test", "p")), resource.PointerOf(resource.NewPointer("sim", "Cs.sim.test", "q"))
	r.writers = []recordedWrite{{writer: "x", ptr: p, read: 2}, {writer: "y", ptr: q, read: 3}}
	r.allCommits = 3
	write := candidate{cat: catEngine, key: "3 write x p", text: "write p by x", actor: "x", write: true, target: p}
	deliver := candidate{cat: catEngine, key: "1 deliver", text: "deliver Created A to y", actor: "Runtime"}

	c, ok := r.guide([]candidate{deliver, write})
	assert.True(t, ok)
	assert.Equal(t, "deliver Created A to y", c.text, "y's pass read the state the run is at")
	r.writers[1].read = 2
	c, ok = r.guide([]candidate{deliver, write})
	assert.True(t, ok)
	assert.Equal(t, "write p by x", c.text, "no pass read the state the run is at: the next commit first")
}

// TestRecording_AnItemsWriteIsNotTakenForAnotherItemsCommit: in the run
// that reproduces a recording, a QController item's write that the
// recording has later is not let go because the commit that comes next is
// its controller's: it is another item's.
func TestRecording_AnItemsWriteIsNotTakenForAnotherItemsCommit(t *testing.T) {
	sc := &Scenario{Recording: &recording.Recording{}, MatchRecording: true}
	r := newRun(sc, plan{noFaults: true})
	defer r.cancel()
	p, q := resource.PointerOf(resource.NewPointer("sim", "Cs.sim.test", "p")), resource.PointerOf(resource.NewPointer("sim", "Cs.sim.test", "q"))
	a, b := resource.PointerOf(resource.NewPointer("sim", "As.sim.test", "a")), resource.PointerOf(resource.NewPointer("sim", "As.sim.test", "b"))
	r.writers = []recordedWrite{{writer: "w", ptr: p, item: a, read: 9}, {writer: "w", ptr: q, item: b, read: 9}}
	write := candidate{cat: catEngine, key: "3 write w q", text: "write q by w", actor: "w", write: true, target: q, item: b}

	_, ok := r.guide([]candidate{write})
	assert.False(t, ok, "item b's write waits for its turn: item a commits next")
	r.writers[0].item = b
	c, ok := r.guide([]candidate{write})
	assert.True(t, ok, "item b's commit comes next: its pass stopped at this write first")
	assert.Equal(t, "write q by w", c.text)
}
