package runtime_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// mapRecorder is a QController over primary As with mapped Bs that map to
// the A their label "parent" names; it records what each MapInput call
// received: "live parent=…" or "destroyed parent=… v…".
type mapRecorder struct {
	mu    sync.Mutex
	calls map[resource.ID][]string
}

func (m *mapRecorder) controller(name string, mapped controller.InputKind) *funcQController {
	return &funcQController{
		name:     name,
		settings: controller.QSettings{Inputs: []controller.Input{in(typeA, controller.InputQPrimary), in(typeB, mapped)}},
		mapInput: func(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			var (
				md   *resource.Metadata
				what string
			)
			if gone, ok := controller.AsDestroyed(p); ok {
				md, what = gone.Metadata(), "destroyed"
			} else {
				res, err := r.Get(ctx, p, state.WithReadOnlyGet())
				if err != nil {
					return nil, err
				}
				md, what = res.Metadata(), "live"
			}
			parent, _ := md.Labels().Get("parent")
			m.mu.Lock()
			if m.calls == nil {
				m.calls = map[resource.ID][]string{}
			}
			m.calls[p.ID()] = append(m.calls[p.ID()], fmt.Sprintf("%s parent=%s v%d", what, parent, md.Version().Value()))
			m.mu.Unlock()
			return []resource.Pointer{ptr(typeA, parent)}, nil
		},
	}
}

func (m *mapRecorder) of(id resource.ID) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls[id]...)
}

// childOf returns the B id labelled parent=parent.
func childOf(id, parent string) *Pair {
	p := newPair(typeB, id, 0)
	p.Metadata().Labels().Set("parent", parent)
	return p
}

// TestQ4_DestroySeenOnlyByARelist: a mapped input destroyed while the
// kind's watch lost the change, found gone by a re-list, reaches MapInput
// as a controller.DestroyedInput with the metadata of the version the
// Runtime last routed (its labels), cached kind or not.
func TestQ4_DestroySeenOnlyByARelist(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &lossyState{forwardingState: forwardingState{inmem.NewState()}}
				var rec mapRecorder
				opts := []runtimetest.Option{runtimetest.WithState(st), runtimetest.WithQControllers(rec.controller("q", controller.InputQMapped))}
				if cached {
					opts = append(opts, runtimetest.WithRuntimeOptions(runtime.WithCachedResource(testNS, typeB)))
				}
				e := start(t, opts...)
				mustCreate(t, st, childOf("m1", "a1"))
				runtimetest.Settle(t, e.Runtime)
				require.Equal(t, []string{"live parent=a1 v1"}, rec.of("m1"))

				st.losing.Store(true)
				require.NoError(t, st.Destroy(context.Background(), ptr(typeB, "m1")))
				synctest.Wait()
				require.Equal(t, []string{"live parent=a1 v1"}, rec.of("m1"), "the watch lost the destroy")
				st.losing.Store(false)

				require.NoError(t, e.Runtime.Relist(context.Background(), kind(typeB)))
				runtimetest.Settle(t, e.Runtime)
				assert.Equal(t, []string{"live parent=a1 v1", "destroyed parent=a1 v1"}, rec.of("m1"),
					"Q4: the destroy found by the re-list reaches MapInput with the last metadata")
			})
		})
	}
}

// TestQ4_DestroyReadyOutputGoneBeforeMapInput: an InputQMappedDestroyReady
// output (tearing down, no finalizers) destroyed before its MapInput item
// runs reaches MapInput as a controller.DestroyedInput with the metadata of
// its last version; one that is not destroyed reaches it as a plain
// pointer.
func TestQ4_DestroyReadyOutputGoneBeforeMapInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		var rec mapRecorder
		gate := make(chan struct{})
		q := rec.controller("q", controller.InputQMappedDestroyReady)
		q.settings.Outputs = []controller.Output{out(typeB, controller.OutputExclusive)}
		mapInput := q.mapInput
		q.mapInput = func(ctx context.Context, l *zap.Logger, r controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return mapInput(ctx, l, r, p)
		}
		ctx := context.Background()
		for _, id := range []string{"kept", "gone"} {
			mustCreate(t, st, childOf(id, "a-"+id), state.WithCreateOwner("q"))
		}
		e := start(t, runtimetest.WithState(st), runtimetest.WithQControllers(q))
		for _, id := range []string{"kept", "gone"} {
			_, err := st.Teardown(ctx, ptr(typeB, id), state.WithTeardownOwner("q"))
			require.NoError(t, err)
		}
		synctest.Wait() // both items queued, one in flight on the gate
		require.NoError(t, st.Destroy(ctx, ptr(typeB, "gone"), state.WithDestroyOwner("q")))
		synctest.Wait()
		gate <- struct{}{}
		gate <- struct{}{}
		runtimetest.Settle(t, e.Runtime)
		assert.Equal(t, []string{"live parent=a-kept v2"}, rec.of("kept"))
		assert.Equal(t, []string{"destroyed parent=a-gone v2"}, rec.of("gone"),
			"Q4: a destroy-ready output destroyed before MapInput reaches it with its last metadata")
	})
}
