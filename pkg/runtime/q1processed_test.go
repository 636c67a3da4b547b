package runtime_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/processed"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// reconciledQController is a funcQController that says which versions of
// its inputs it reconciled (processed.Source): those in done.
type reconciledQController struct {
	*funcQController
	done func(md *resource.Metadata) bool
}

func (c reconciledQController) ProcessedInputs() processed.Func { return c.done }

// TestQ1Extended_AnUpdateTheControllerReconciledIsNotQueued: the Runtime
// asks a QController that says which versions of its primary inputs it
// reconciled (processed.Source) about each update it routes, and does not
// queue an update to such a version; the others are queued (rule Q1,
// extended).
func TestQ1Extended_AnUpdateTheControllerReconciledIsNotQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		log := &callLog{}
		c := reconciledQController{
			funcQController: &funcQController{name: "q", settings: primaryOf(typeA)},
			// Version 2 (the first update) counts as reconciled.
			done: func(md *resource.Metadata) bool { return md.Version().Value() == 2 },
		}
		c.reconcile = func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) error {
			log.add(p.ID())
			return nil
		}
		start(t, runtimetest.WithState(st), runtimetest.WithQControllers(c))
		mustCreate(t, st, newPair(typeA, "x", 0))
		synctest.Wait()
		require.Equal(t, []string{"x"}, ids(log.take()), "a creation is queued")
		set := func(n int) {
			require.NoError(t, st.Modify(context.Background(), newPair(typeA, "x", 0), func(r resource.Resource) error {
				r.(*Pair).TypedSpec().A = n
				return nil
			}))
			synctest.Wait()
		}
		set(1) // version 2
		assert.Empty(t, ids(log.take()), "the update to a version reconciled is not queued")
		set(2) // version 3
		assert.Equal(t, []string{"x"}, ids(log.take()), "another update is queued")
	})
}
