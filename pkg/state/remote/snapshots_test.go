package remote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// TestS7_ALoneWatchSharesTheOldItDecoded: over the wire, a lone watch of
// a kind gets as each change's Old the very object it got as the
// Resource of the change before (decoded once, though the client keeps
// only the newest version for it), every object is frozen, and Update of
// an Old — a version the client no longer keeps — is refused as a shared
// snapshot, writing nothing (rule S7).
func TestS7_ALoneWatchSharesTheOldItDecoded(t *testing.T) {
	st, _ := served(t, "unix")
	ctx := testCtx(t)
	const ns = "s7-lone"
	kind := resource.NewKind(ns, conformance.IntResourceType)
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, kind, ch))
	r := conformance.NewIntResource(ns, "a", 1)
	require.NoError(t, st.Create(ctx, r))
	var prev resource.Resource
	for v := 1; v <= 4; v++ {
		if v > 1 {
			r.TypedSpec().Value = v
			require.NoError(t, st.Update(ctx, r))
		}
		ev := next(t, ch)
		require.Equal(t, v, ev.Resource.(*conformance.IntResource).TypedSpec().Value)
		assert.True(t, ev.Resource.Metadata().Frozen())
		if prev != nil {
			assert.Same(t, prev, ev.Old, "change %d: the Old is the Resource of the change before", v)
		}
		prev = ev.Resource
	}

	r.TypedSpec().Value = 5
	require.NoError(t, st.Update(ctx, r))
	ev := next(t, ch)
	err := st.Update(ctx, ev.Old)
	require.Error(t, err, "Update of an Old the client no longer keeps")
	assert.True(t, state.IsInvalidError(err), "%v", err)
	got, err := st.Get(ctx, resource.PointerOf(r.Metadata()))
	require.NoError(t, err)
	assert.Equal(t, 5, got.(*conformance.IntResource).TypedSpec().Value, "nothing written")
}

// next receives the next event, failing the test after a minute (a
// failure's bound).
func next(t *testing.T, ch <-chan state.Event) state.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
		return state.Event{}
	}
}
