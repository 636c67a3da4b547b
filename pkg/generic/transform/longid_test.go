package transform_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// TestInputsWithLongIDsAreTrackedAsShortOnes: a controller's entries hold
// IDs longer than fit in place in an arena, rewritten once most of it
// belongs to inputs gone; inputs destroyed, created between the others
// and updated after that are processed as with short IDs (G1: every
// output holds what its input's current spec gives).
func TestInputsWithLongIDsAreTrackedAsShortOnes(t *testing.T) {
	st := newState()
	id := func(i int) resource.ID { return fmt.Sprintf("an-input-whose-id-is-long-%04d", i) }
	num := func(id resource.ID) int { n, _ := strconv.Atoi(id[len(id)-4:]); return n }
	doubled := func(plus int) func(*B, *assert.Assertions) {
		return runtimetest.Holds(func(b *B) bool { return b.TypedSpec().N == 2*(plus+num(b.Metadata().ID())) })
	}
	var all []resource.ID
	for i := 0; i < 600; i += 2 {
		runtimetest.Create(t, st, newA(id(i), i))
		all = append(all, id(i))
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(aToB("AtoB")))
	runtimetest.AssertResources(t, st, all, doubled(0))

	var kept []resource.ID
	for k, i := range all {
		if k%3 == 0 {
			kept = append(kept, i)
			continue
		}
		require.NoError(t, st.Destroy(context.Background(), ptrA(i)))
	}
	for k, i := range all {
		if k%3 != 0 {
			runtimetest.AssertNoResource[*B](t, st, i)
		}
	}
	for i := 1; i < 200; i += 2 { // between the inputs kept
		runtimetest.Create(t, st, newA(id(i), i))
		kept = append(kept, id(i))
	}
	for _, i := range kept {
		fixture.SetN[*A](t, st, ptrA(i), 1000+num(i))
	}
	runtimetest.AssertResources(t, st, kept, doubled(1000))
}
