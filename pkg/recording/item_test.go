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
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestRC9_AQControllersCommitsNameTheirItem: each commit of a
// QController (its finalizer on an input, its output) names the item
// whose run made it (Change.Item), two workers running items at once;
// a Controller's commits name none.
func TestRC9_AQControllersCommitsNameTheirItem(t *testing.T) {
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
	}, qtransform.WithConcurrency(2))))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	rec, err := recording.New(st, registry(t), recording.WithRuntime(rt))
	require.NoError(t, err)
	started(t, rec)
	ids := []string{"a", "b", "c", "d"}
	for _, id := range ids {
		require.NoError(t, st.Create(ctx, newNote(id, 1)))
	}
	eventually(t, "every note was echoed", func() bool {
		l, err := st.List(ctx, echoKind)
		return err == nil && len(l.Items) == len(ids)
	})
	var r *recording.Recording
	eventually(t, "the recording holds a finalizer and an echo of each note", func() bool {
		r, err = rec.Take()
		require.NoError(t, err)
		n := 0
		for _, c := range r.Changes {
			if c.By == recording.ByController {
				n++
			}
		}
		return n >= 2*len(ids)
	})
	for _, c := range r.Changes {
		if c.By == recording.ByController {
			assert.Equal(t, resource.PointerOf(resource.NewPointer(ns, noteKind.Type(), c.Pointer.ID())), c.Item, "%s", recording.ChangeText(r, &c))
		}
	}
}
