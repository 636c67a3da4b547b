package routed_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/internal/kindtap"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/routed"
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

// TestRC11_ARoutedStateTapsTheKindsBackend (recording rule RC11 over a
// routed state): a kind's commits are tapped in the backend that serves
// its namespace (a flight recorder over the routed state then needs no
// watch of it); a namespace no rule covers is refused as by every call,
// and a backend that cannot tap is errors.ErrUnsupported.
func TestRC11_ARoutedStateTapsTheKindsBackend(t *testing.T) {
	ctx := t.Context()
	cfg, other := inmem.NewState(), inmem.NewState()
	hidden := struct{ state.State }{inmem.NewState()} // hides inmem's tap
	st, err := routed.New([]routed.Rule{routed.Exact("cfg", cfg), routed.Exact("hidden", hidden)}, routed.WithDefault(other))
	require.NoError(t, err)
	tapper, ok := any(st).(kindtap.Tapper)
	require.True(t, ok, "a routed state can tap a kind's commits")
	var seen commits
	remove, err := tapper.TapKind(resource.NewKind("cfg", conformance.IntResourceType), &seen)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("cfg", "a", 1)))
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("elsewhere", "b", 1)))
	require.NoError(t, st.Destroy(ctx, resource.NewPointer("cfg", conformance.IntResourceType, "a")))
	remove()
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("cfg", "c", 1)))
	assert.Equal(t, []string{"a", "a"}, seen.ids, "the cfg backend's commits while tapped")

	_, err = tapper.TapKind(resource.NewKind("hidden", conformance.IntResourceType), &seen)
	assert.True(t, errors.Is(err, errors.ErrUnsupported), "%v", err)
	only, err := routed.New([]routed.Rule{routed.Exact("cfg", cfg)})
	require.NoError(t, err)
	_, err = any(only).(kindtap.Tapper).TapKind(resource.NewKind("runtime", conformance.IntResourceType), &seen)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.ErrorContains(t, err, `no rule covers namespace "runtime"`)
}
