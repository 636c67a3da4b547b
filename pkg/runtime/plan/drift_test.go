package plan_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/plan"
)

// TestPL5_DriftHasWritersAndChainsFromTheLiveState: the live state holds
// notes x and z but none of their echoes and tallies (the daemon was not
// at its fixed point). The plan's drift names each write's controller
// and its chain from the live state's resource it follows from: mirror's
// echo from its note, tallier's tally (its RunHook's) from the note too,
// and the change's own writes keep their chains from the change.
func TestPL5_DriftHasWritersAndChainsFromTheLiveState(t *testing.T) {
	d := plan.Daemon{Setup: func([]resource.Resource) (plan.System, error) {
		q := &tallier{handed: make(chan handoff)}
		return plan.System{Register: func(e controller.Engine) error {
			return errors.Join(e.RegisterController(mirror{}), e.RegisterQController(q))
		}}, nil
	}}
	live := plan.NewState(nil)
	ctx := context.Background()
	require.NoError(t, live.Create(ctx, note("x", 1)))
	require.NoError(t, live.Create(ctx, note("z", 3)))
	p, err := plan.Make(ctx, live, d, plan.Change{Set: []resource.Resource{note("y", 2)}}, plan.WithTimeout(time.Minute))
	require.NoError(t, err)
	require.True(t, p.Converged, p.Why)
	var out bytes.Buffer
	require.NoError(t, p.WriteText(&out))
	text := out.String()
	drift, changes, ok := strings.Cut(text, "The change would:\n")
	require.True(t, ok, text)
	for _, id := range []string{"x", "z"} {
		assert.Contains(t, drift, "  + Echoes.test.resgraph.dev(plan/"+id+") (by mirror)\n")
		assert.Contains(t, drift, "      because: Notes.test.resgraph.dev(plan/"+id+") (in the live state) → mirror modify Echoes.test.resgraph.dev(plan/"+id+")\n")
		assert.Contains(t, drift, "  + Tallies.test.resgraph.dev(plan/"+id+") (by tallier)\n")
		assert.Contains(t, drift, "      because: Notes.test.resgraph.dev(plan/"+id+") (in the live state) → tallier modify Tallies.test.resgraph.dev(plan/"+id+")\n")
	}
	assert.Contains(t, changes, "      because: Notes.test.resgraph.dev(plan/y) (the change) → mirror modify Echoes.test.resgraph.dev(plan/y)\n")
	assert.NotContains(t, changes, "plan/x")
}
