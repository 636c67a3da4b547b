package recording_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// tapCounting is a watchCounting state that can tap a kind's commits (it
// asks the inmem state it wraps), and notes the kinds tapped.
type tapCounting struct {
	*watchCounting
	tapped []string
}

func (s *tapCounting) TapKind(k resource.Kind, t kindtap.Tap) (func(), error) {
	s.mu.Lock()
	s.tapped = append(s.tapped, k.Type())
	s.mu.Unlock()
	return s.State.(kindtap.Tapper).TapKind(k, t)
}

// TestRC11_ABareStatesCommitsAreReadWithoutAWatch: a recorder of a state
// that can tap a kind's commits opens no watch of it, and records every
// change of a writer that runs far ahead of it one by one (none
// coalesced), in order, each at its write's revision.
func TestRC11_ABareStatesCommitsAreReadWithoutAWatch(t *testing.T) {
	st := &tapCounting{watchCounting: &watchCounting{State: inmem.NewState()}}
	st.start()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind))
	require.NoError(t, err)
	started(t, rec)
	assert.Empty(t, st.kinds(), "no watch")
	assert.Equal(t, []string{noteKind.Type()}, st.tapped)

	const n = 3000
	ctx := context.Background()
	notes := make([]*Note, n)
	for i := range notes {
		notes[i] = newNote(fmt.Sprint("n", i), i)
		require.NoError(t, st.Create(ctx, notes[i]))
	}
	for i, note := range notes {
		note.TypedSpec().N = -i
		require.NoError(t, st.Update(ctx, note))
	}
	r := settled(t, rec, st, noteKind)
	require.Len(t, r.Changes, 2*n)
	assert.Zero(t, r.Coalesced)
	for i, c := range r.Changes {
		want := uint64(1 + i/n)
		require.Equal(t, want, c.Version, "change %d", i)
		require.Equal(t, resource.PointerOf(notes[i%n].Metadata()), c.Pointer)
		require.Equal(t, r.Revision+uint64(i)+1, c.Revision)
		require.False(t, c.Coalesced)
	}
}
