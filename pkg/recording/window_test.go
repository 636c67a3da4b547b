package recording

import (
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
	w.reset(map[resource.PointerKey]resource.Resource{resource.PointerOf(at("a", 1).Metadata()): at("a", 1)}, now, 10)
	w.add(entry{at: now, rev: 8, by: ByOutside, op: OpUpdate, res: at("a", 2)}, now)
	w.add(entry{at: now, rev: 12, by: ByOutside, op: OpUpdate, res: at("a", 4)}, now)
	w.add(entry{at: now, rev: 11, by: ByWorld, op: OpAction, action: "x"}, now)
	w.add(entry{at: now, rev: 11, by: ByOutside, op: OpUpdate, res: at("a", 3)}, now)
	v := w.view()
	require.Len(t, v.base, 1)
	assert.Equal(t, uint64(2), v.base[0].Metadata().Version().Value(), "the change at revision 8 is in the starting state")
	var got []string
	for _, e := range v.entries {
		got = append(got, e.op.String())
		if e.res != nil {
			got[len(got)-1] += "@" + e.res.Metadata().Version().String()
		}
	}
	assert.Equal(t, []string{"update@3", "action", "update@4"}, got)
}
