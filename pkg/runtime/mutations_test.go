package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestS7_GuardReportsNameTheHolder: over a state with the production guard
// (the default outside test binaries), a controller that changes a shared
// snapshot it was handed in place is logged at ERROR naming it — from the
// trace, which shows the version was routed to it — once the guard checks
// that version (its next write); nothing panics and the Runtime goes on.
// With the trace off, the controllers whose inputs cover the resource are
// named.
func TestS7_GuardReportsNameTheHolder(t *testing.T) {
	for name, opts := range map[string][]runtime.Option{"trace on": nil, "trace off": {runtime.WithTrace(0)}} {
		t.Run(name, func(t *testing.T) {
			core, logs := observer.New(zapcore.DebugLevel)
			synctest.Test(t, func(t *testing.T) {
				st := inmem.NewState(inmem.WithMutationGuard())
				q := &funcQController{name: "mutator", settings: primaryOf(typeA),
					reconcile: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
						in, err := r.Get(ctx, p, state.WithReadOnlyGet())
						if err != nil {
							return err
						}
						in.(*Pair).TypedSpec().B = 99 // the bug: a shared snapshot
						return nil
					}}
				other := &funcQController{name: "bystander", settings: primaryOf(typeB)}
				start(t, runtimetest.WithState(st), runtimetest.WithLogger(zap.New(core)),
					runtimetest.WithQControllers(q, other), runtimetest.WithRuntimeOptions(opts...))
				mustCreate(t, st, newPair(typeA, "1", 1)) // the first write of the kind: sampled
				synctest.Wait()
				touchA(t, st, "1", 2) // the guard checks the version it replaces
				synctest.Wait()
				found := logs.FilterMessageSnippet("a shared read-only snapshot was changed in place").All()
				require.Len(t, found, 1)
				assert.Equal(t, zapcore.ErrorLevel, found[0].Level)
				assert.Contains(t, found[0].Message, "by controller mutator")
				assert.Equal(t, "As.test.resgraph.dev(test/1)", found[0].ContextMap()["resource"])
				assert.Contains(t, found[0].ContextMap()["error"], "spec.B was 0, is 99")
			})
		})
	}
}
