package remote_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestN1_RevisionsCrossTheWire: a client of a state that numbers its
// changes reports the server's revisions (state.RevisionReporter, the
// revisions of reads and events); of one that does not, an error matching
// errors.ErrUnsupported.
func TestN1_RevisionsCrossTheWire(t *testing.T) {
	ctx := testCtx(t)
	st := inmem.NewState()
	d := serve(t, listen(t, "unix"), st)
	cl := client(t, d.Addr)
	kind := resource.NewKind(limitNS, conformance.IntResourceType)
	ch := make(chan state.Event, 4)
	require.NoError(t, cl.WatchKind(ctx, kind, ch))
	r := conformance.NewIntResource(limitNS, "a", 1)
	require.NoError(t, cl.Create(ctx, r))

	want, err := st.(state.RevisionReporter).Revision(ctx)
	require.NoError(t, err)
	got, err := cl.(state.RevisionReporter).Revision(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	last, at, err := cl.(state.RevisionReporter).KindRevision(ctx, kind)
	require.NoError(t, err)
	assert.Equal(t, want, last)
	assert.GreaterOrEqual(t, at, last)
	var getRev, listRev uint64
	_, err = cl.Get(ctx, r.Metadata(), state.WithGetRevision(&getRev))
	require.NoError(t, err)
	_, err = cl.List(ctx, resource.NewKind("empty", conformance.IntResourceType), state.WithListRevision(&listRev))
	require.NoError(t, err)
	assert.Equal(t, want, getRev)
	assert.Equal(t, want, listRev, "an empty List reports its revision too")
	assert.Equal(t, want, (<-ch).Revision)

	plain := serve(t, listen(t, "unix"), state.WrapCore(coreOnly{inmem.NewState()}))
	_, err = client(t, plain.Addr).(state.RevisionReporter).Revision(ctx)
	assert.True(t, errors.Is(err, errors.ErrUnsupported), "%v", err)
}

// coreOnly is a state's core without its optional interfaces.
type coreOnly struct{ state.CoreState }
