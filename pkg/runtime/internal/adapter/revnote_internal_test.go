package adapter

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
