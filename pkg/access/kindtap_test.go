package access_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// commits is a kindtap.Tap that keeps the IDs it saw committed.
type commits struct {
	mu  sync.Mutex
	ids []string
}

func (c *commits) Committed(_ uint64, old, new resource.Resource, _ int64) {
	r := new
	if r == nil {
		r = old
	}
	c.mu.Lock()
	c.ids = append(c.ids, r.Metadata().ID())
	c.mu.Unlock()
}

// TestRC11_AGuardTapsItsStatesCommitsAsAWatch (recording rule RC11 over
// a guard): a guard over a state that can tap a kind's commits taps them
// for a subject that may watch the kind (a flight recorder over it then
// needs no watch); one that may not is denied as its watch would be,
// audited, and nothing is tapped; over a state that cannot tap, the tap
// is errors.ErrUnsupported.
func TestRC11_AGuardTapsItsStatesCommitsAsAWatch(t *testing.T) {
	ctx := testCtx(t)
	p, logs := policy(t, readerWriter())
	st := inmem.NewState()
	kind := resource.NewKind("network", linkType)
	tapper, ok := p.Guard(st, reader).(kindtap.Tapper)
	require.True(t, ok, "a guard can tap a kind's commits")
	var seen commits
	remove, err := tapper.TapKind(kind, &seen)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newLink("network", "eth0", 1500)))
	remove()
	require.NoError(t, st.Create(ctx, newLink("network", "eth1", 1500)))
	assert.Equal(t, []string{"eth0"}, seen.ids, "the commits while tapped")

	logs.TakeAll()
	_, err = p.Guard(st, nobody).(kindtap.Tapper).TapKind(kind, &seen)
	require.True(t, access.IsDeniedError(err), "%v", err)
	require.Equal(t, 1, logs.Len(), "the denial is audited")
	assert.Equal(t, "watch", logs.All()[0].ContextMap()["verb"])

	hidden := struct{ state.State }{st} // hides inmem's tap
	_, err = p.Guard(hidden, reader).(kindtap.Tapper).TapKind(kind, &seen)
	assert.True(t, errors.Is(err, errors.ErrUnsupported), "%v", err)
}
