package recording_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestRC10_AnAttachedRecorderOfAQTransformRecordsItsFinalizers: a
// recorder attached to a Runtime whose QController puts its finalizer on
// each input and takes it off when the input tears down records every
// change, the finalizer-only ones included: outside writes create,
// modify, tear down and destroy notes, and a take's final state is the
// state's (the take never waits for a change no tap reports).
func TestRC10_AnAttachedRecorderOfAQTransformRecordsItsFinalizers(t *testing.T) {
	st := inmem.NewState()
	rt, err := runtime.New(st, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterQController(qtransform.NewQController(qtransform.Settings[*Note, *Echo]{
		Name:            "qechoer",
		MapMetadataFunc: func(n *Note) *Echo { return typed.NewDefault[NoteSpec, EchoDef](n.Metadata().ID(), NoteSpec{}) },
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Note, e *Echo) error {
			e.TypedSpec().N = n.TypedSpec().N + 1
			return nil
		},
	})))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	require.NoError(t, rec.Attach(ctx))
	require.NoError(t, st.Create(ctx, newNote("a", 1)))
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("b", 2)))
	echoed(t, st, "a", "b")
	require.NoError(t, st.TeardownAndDestroy(ctx, resource.NewPointer(ns, noteKind.Type(), "a")))
	require.NoError(t, st.Create(ctx, newNote("c", 3)))
	echoed(t, st, "b", "c")
	r := settled(t, rec, st, echoKind, noteKind)
	var finalizers []string
	for _, c := range r.Changes {
		if c.Pointer.Type() == noteKind.Type() && c.By == recording.ByController {
			finalizers = append(finalizers, c.Pointer.ID()+" "+c.Writer)
		}
	}
	assert.ElementsMatch(t, []string{"a qechoer", "a qechoer", "b qechoer", "c qechoer"}, finalizers, "each finalizer put on and the one taken off")
}

// echoed waits until the echoes are exactly those of ids.
func echoed(t *testing.T, st state.State, ids ...string) {
	t.Helper()
	eventually(t, "the echoes are those of the notes", func() bool {
		l, err := st.List(context.Background(), echoKind)
		if err != nil || len(l.Items) != len(ids) {
			return false
		}
		for i, r := range l.Items {
			if r.Metadata().ID() != ids[i] {
				return false
			}
		}
		return true
	})
}
