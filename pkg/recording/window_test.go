package recording

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type spec struct{ N int }
type def struct{}

func (def) Definition() typed.Definition {
	return typed.Definition{Type: "Ws.test.resgraph.dev", DefaultNamespace: "w"}
}

func at(id string, v uint64) resource.Resource {
	return atOf(id, v)
}

func atOf(id string, v uint64) *typed.Resource[spec, def] {
	r := typed.NewDefault[spec, def](id, spec{N: int(v)})
	r.Metadata().SetVersion(resource.VersionUndefined)
	for range v {
		r.Metadata().SetVersion(r.Metadata().Version().Next())
	}
	return r
}

// TestRC1_ChangesUpToTheCutGoIntoTheStart: a change with a revision up
// to the starting state's (one kind listed before another) goes into the
// starting state, never into the changes; later changes are ordered by
// revision whatever their order of arrival, a world action after the
// changes of its revision.
func TestRC1_ChangesUpToTheCutGoIntoTheStart(t *testing.T) {
	now := time.Now()
	w := newWindow(time.Hour, 1<<20)
	w.reset([]resource.Resource{at("a", 1)}, now, 10, nil, nil)
	update := func(rev, v uint64) *change {
		return &change{at: now, rev: rev, by: ByOutside, op: OpUpdate, res: at("a", v)}
	}
	w.add(update(8, 2))
	w.add(update(12, 4))
	w.add(&change{at: now, rev: 11, by: ByWorld, op: OpAction, action: "x"})
	w.add(update(11, 3))
	v := w.view(nil)
	require.Len(t, v.initial, 1)
	assert.Equal(t, uint64(2), v.initial[0].Metadata().Version().Value(), "the change at revision 8 is in the starting state")
	var got []string
	for _, e := range v.entries {
		got = append(got, e.op.String())
		if e.res != nil {
			got[len(got)-1] += "@" + e.res.Metadata().Version().String()
		}
	}
	assert.Equal(t, []string{"update@3", "action", "update@4"}, got)
}

// TestRC3_ResourcesThatComeAndGoLeaveNothingBehind: a window through
// which 20k resources are created and destroyed holds a table of the
// resources it still holds, not of every resource it saw.
func TestRC3_ResourcesThatComeAndGoLeaveNothingBehind(t *testing.T) {
	now := time.Now()
	w := newWindow(time.Hour, 64<<10)
	w.reset(nil, now, 0, nil, nil)
	for i := range 20_000 {
		r := at(fmt.Sprint("r", i), 1)
		w.add(&change{at: now, rev: uint64(2*i + 1), by: ByOutside, op: OpCreate, res: r, size: 100})
		w.add(&change{at: now, rev: uint64(2*i + 2), by: ByOutside, op: OpDestroy, res: r, size: 100})
	}
	assert.Less(t, w.slots.len(), 8192, "slots of resources gone are dropped")
	assert.Equal(t, w.slots.len(), w.cur.len(), "the state now has a value per slot")
	assert.Less(t, w.extras.len(), 4096, "extras of changes gone are dropped")
	v := w.view(nil)
	assert.Empty(t, v.final)
	assert.Empty(t, v.initial)
	assert.NotEmpty(t, v.entries)
	for _, e := range v.entries {
		require.Equal(t, resource.PointerOf(e.res.Metadata()), e.key, "a renumbered slot keeps its pointer")
	}
}

// TestRC2_AWorldActionNotedAfterACheckpointAtItsRevisionStaysInTheWindow:
// a world action noted while the state is quiet, at the revision of the
// window's newest checkpoint but after it was taken, is a change after
// that checkpoint: when the window rolls (the checkpoint becomes its
// start), the action stays one of its changes.
func TestRC2_AWorldActionNotedAfterACheckpointAtItsRevisionStaysInTheWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newWindow(time.Minute, 1<<30)
	w.reset(nil, t0, 5, nil, nil)
	w.add(&change{at: t0.Add(time.Second), rev: 6, by: ByOutside, op: OpCreate, res: at("a", 1), size: 100})
	// Half the window's age later a change rolls it: its newest
	// checkpoint is at revision 7, the state now.
	w.add(&change{at: t0.Add(31 * time.Second), rev: 7, by: ByOutside, op: OpUpdate, res: at("a", 2), size: 100})
	require.Equal(t, uint64(7), w.last.rev)
	// Another half later, the state quiet, an action of the world: the
	// window rolls again, that checkpoint becomes its start.
	w.add(&change{at: t0.Add(62 * time.Second), rev: 7, by: ByWorld, op: OpAction, action: "unplug", size: 10})
	require.Equal(t, uint64(7), w.prev.rev, "the window rolled: it starts at the checkpoint taken before the action")
	v := w.view(nil)
	require.Len(t, v.entries, 1, "the action is a change of the window")
	assert.Equal(t, "unplug", v.entries[0].action)
}
