package adapter

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestARevisionNoteTakesEachReadsOwnOptions: a read's options, with the
// note's revision option first, are the read's own whatever the pooled
// note's buffer held before (options of the same count but other
// values replace them; the same values are kept), and a revision the
// caller asks for itself wins.
func TestARevisionNoteTakesEachReadsOwnOptions(t *testing.T) {
	n := revNotes.Get().(*revNote)
	defer revNotes.Put(n)
	var mine uint64
	get := func(opts ...state.GetOption) (o state.GetOptions) {
		for _, f := range n.getOpts(opts) {
			f(&o)
		}
		return o
	}
	list := func(opts ...state.ListOption) (o state.ListOptions) {
		for _, f := range n.listOpts(opts) {
			f(&o)
		}
		return o
	}
	for range 2 {
		assert.Equal(t, state.GetOptions{ReadOnly: true, Revision: &n.rev}, get(state.WithReadOnlyGet()))
		assert.Equal(t, state.GetOptions{Revision: &mine}, get(state.WithGetRevision(&mine)))
		assert.Equal(t, state.GetOptions{Revision: &n.rev}, get())
		assert.Equal(t, state.ListOptions{ReadOnly: true, Revision: &n.rev}, list(state.WithReadOnlyList()))
		assert.Equal(t, state.ListOptions{Revision: &mine}, list(state.WithListRevision(&mine)))
		assert.Equal(t, state.ListOptions{Revision: &n.rev}, list())
	}
}

// TestAReadTakesTheControllersOwnNoteUnlessAnotherReadHoldsIt: once a
// CommitLog is set, a read takes the controller's own revision note; a
// read made while another holds it takes a note of its own (a pooled
// one), so that reads at once never share where their revisions are
// told; the own note is taken again once given back.
func TestAReadTakesTheControllersOwnNoteUnlessAnotherReadHoldsIt(t *testing.T) {
	a := &Adapter{}
	a.SetCommitLog(noCommits{})
	first := a.takeNote()
	assert.True(t, first.own, "the first read takes the controller's own note")
	second := a.takeNote()
	assert.NotSame(t, first, second, "a read while another holds the own note takes another")
	assert.False(t, second.own)
	first.rev, second.rev = 1, 2
	a.giveNote(second)
	assert.Equal(t, uint64(1), first.rev, "a pooled note given back leaves the own note alone")
	a.giveNote(first)
	again := a.takeNote()
	assert.Same(t, first, again, "the own note given back is taken again")
	assert.Zero(t, again.rev, "a note taken says no revision until its read tells one")
	a.giveNote(again)
}

// noCommits is a CommitLog that keeps nothing.
type noCommits struct{}

func (noCommits) Committed(string, resource.Pointer, uint64, uint64, uint64, *resource.PointerKey) {}
