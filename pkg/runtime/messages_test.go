package runtime_test

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestMessages_SayEachThingOnce: the exact text of representative errors
// a controller gets from its runtime: the controller, the operation and the
// resource are each named once (issue 9: a Create of another controller's
// shared output named the resource twice).
func TestMessages_SayEachThingOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		c, rts := captureRuntime("c", []controller.Input{in(typeA, controller.InputWeak)}, []controller.Output{out(typeB, controller.OutputShared)})
		d, _ := captureRuntime("d", nil, []controller.Output{out(typeB, controller.OutputShared)})
		mustCreate(t, st, newPair(typeB, "owned", 1), state.WithCreateOwner("d"))
		start(t, runtimetest.WithState(st), runtimetest.WithControllers(c, d))
		r := <-rts
		ctx := t.Context()

		_, getDenied := r.Get(ctx, ptr(typeC, "x"))
		_, getEmpty := r.Get(ctx, resource.NewPointer("", typeA, "x"))
		for _, tc := range []struct {
			err  error
			want string
		}{
			{getDenied, `controller "c": Get Cs.test.resgraph.dev(test/x) denied: not a declared input or output`},
			{getEmpty, "resource As.test.resgraph.dev(/x): empty namespace"},
			{r.Create(ctx, newPair(typeB, "owned", 1)), `resource Bs.test.resgraph.dev(test/owned): already exists, owned by "d", not "c"`},
			{r.Modify(ctx, newPair(typeB, "owned", 1), func(resource.Resource) error { return nil }), `resource Bs.test.resgraph.dev(test/owned): owner is "d", not "c"`},
			{r.Destroy(ctx, ptr(typeB, "nope")), "resource Bs.test.resgraph.dev(test/nope): not found"},
			{r.CleanupOutputs(ctx, kind(typeB)), `controller "c": CleanupOutputs called before StartTrackingOutputs`},
		} {
			assert.EqualError(t, tc.err, tc.want)
		}
		assert.True(t, state.IsOwnerConflictError(r.Create(ctx, newPair(typeB, "owned", 1))))
	})
}
