package remote_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resgraph/resgraph/pkg/observe/explain"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestOB1_ExplanationsAndGraphCrossTheWire(t *testing.T) {
	d := start(t)
	ctx := context.Background()
	runtimetest.Create(t, d.env.State, typed.NewDefault[linkSpec, linkDef]("eth0", linkSpec{MTU: 1500}))
	runtimetest.AssertResource(t, d.env.State, "eth0", runtimetest.Holds(func(s *linkStatus) bool { return s.TypedSpec().MTU == 1500 }))
	runtimetest.Settle(t, d.env.Runtime)
	obs := d.env.Runtime.Observe()

	ptr := resource.NewPointer("net", "LinkStatuses.test.resgraph.dev", "eth0")
	got, err := d.client.Explain(ctx, ptr)
	require.NoError(t, err)
	want, err := obs.Explain(ctx, ptr)
	require.NoError(t, err)
	assert.True(t, got.Exists)
	assert.Equal(t, []string{"LinkToStatus"}, edgeControllers(got.Writers))
	got.Time, want.Time = time.Time{}, time.Time{}
	assertSameJSON(t, want, got)

	gotC, err := d.client.ExplainController(ctx, "LinkToStatus")
	require.NoError(t, err)
	wantC, err := obs.ExplainController(ctx, "LinkToStatus")
	require.NoError(t, err)
	gotC.Time, wantC.Time = time.Time{}, time.Time{}
	assertSameJSON(t, wantC, gotC)

	g, err := d.client.Graph(ctx)
	require.NoError(t, err)
	wantG, err := obs.Graph()
	require.NoError(t, err)
	assert.Equal(t, wantG, g)
	assert.NotEmpty(t, g.Edges)
}

// assertSameJSON checks that two explanations are equal in their JSON
// form (times lose their location on the wire, not their instant).
func assertSameJSON(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, string(w), string(g))
}

func edgeControllers(es []explain.Edge) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Controller)
	}
	return out
}

func TestOB2_ErrorsKeepTheirClasses(t *testing.T) {
	d := start(t)
	ctx := context.Background()

	_, err := d.client.ExplainController(ctx, "NoSuchController")
	require.Error(t, err)
	assert.True(t, state.IsNotFoundError(err), "%v", err)
	assert.Equal(t, codes.NotFound, status.Code(err))
	assert.Contains(t, err.Error(), "NoSuchController")

	for _, ptr := range []resource.Pointer{
		resource.NewPointer("", "LinkStatuses.test.resgraph.dev", "eth0"),
		resource.NewPointer("net", "", "eth0"),
		resource.NewPointer("net", "LinkStatuses.test.resgraph.dev", ""),
		nil,
	} {
		_, err := d.client.Explain(ctx, ptr)
		require.Error(t, err)
		assert.True(t, state.IsInvalidError(err), "%v", err)
		assert.Equal(t, codes.InvalidArgument, status.Code(err))
	}
	_, err = d.client.ExplainController(ctx, "")
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.Contains(t, err.Error(), "name is empty")

	// A resource that does not exist is explained, not an error.
	x, err := d.client.Explain(ctx, resource.NewPointer("net", "LinkStatuses.test.resgraph.dev", "nope"))
	require.NoError(t, err)
	assert.False(t, x.Exists)
}
