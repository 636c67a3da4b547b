package recording_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// writer is a Controller with no input that writes its output (declared
// in any namespace) "x" on each wake-up.
type writer struct{}

func (writer) Name() string               { return "writer" }
func (writer) Inputs() []controller.Input { return nil }
func (writer) Outputs() []controller.Output {
	return []controller.Output{{Type: EchoDef{}.Definition().Type}}
}

func (writer) Run(ctx context.Context, rt controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-rt.EventCh():
		}
		if err := safe.WriterModify(ctx, rt, typed.NewDefault[NoteSpec, EchoDef]("x", NoteSpec{}), func(e *Echo) error {
			e.TypedSpec().N++
			return nil
		}); err != nil {
			return err
		}
	}
}

// TestRC8_AnOutputInAnyNamespaceIsRecordedInItsTypesDefaultNamespace: a
// Runtime whose only controller reads nothing and writes an output
// declared in any namespace has a kind to record: the output's type in
// its default namespace (the registry's definition), where the
// controller's commits are recorded.
func TestRC8_AnOutputInAnyNamespaceIsRecordedInItsTypesDefaultNamespace(t *testing.T) {
	st := inmem.NewState()
	rt, err := runtime.New(st, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(writer{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	require.NoError(t, rec.Attach(ctx))
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	started(t, rec)
	eventually(t, "the writer wrote its echo", func() bool {
		_, err := st.Get(ctx, resource.NewPointer(ns, echoKind.Type(), "x"))
		return err == nil
	})
	r := settled(t, rec, st, echoKind)
	assert.Equal(t, []recording.Kind{{Namespace: ns, Type: echoKind.Type()}}, r.Kinds)
	assert.Equal(t, []string{"Echoes.test.resgraph.dev(rec/x) controller create writer"}, changeOps(r))
}
