package boltdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/internal/fixture/family"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

// TestG2_ATypeTheCodecDoesNotKnowIsRefusedAtRegistration: a controller
// whose output type the state's codec does not know (a qtransform: its
// output type is an input too) is refused at
// registration with an invalid-class error that names the controller, the
// output and the fix (register it in the codec), instead of failing at its
// first write; nothing is registered or written.
func TestG2_ATypeTheCodecDoesNotKnowIsRefusedAtRegistration(t *testing.T) {
	reg := codec.NewRegistry()
	codec.MustRegister[family.Spec, family.ParentDef](reg)
	codec.MustRegister[family.Spec, family.ChildDef](reg) // not the parents' states
	st, err := boltdb.Open(dbPath(t), reg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	rt, err := runtime.New(st, zap.NewNop())
	require.NoError(t, err)

	err = rt.RegisterQController(family.Controller(&family.Mapper[*family.Child]{}))
	require.Error(t, err)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, codec.IsUnknownTypeError(err), "the codec's error is in the chain: %v", err)
	// Its output type is also an input of its (destroy-ready outputs).
	assert.Contains(t, err.Error(), `register qcontroller "Families": input ParentStates.test.resgraph.dev(family): the state cannot store this type: `+
		`boltdb: codec: resource type "ParentStates.test.resgraph.dev" is not registered: register it in the codec registry the state uses`)
	g, err := rt.GetDependencyGraph()
	require.NoError(t, err)
	assert.Empty(t, g.Edges, "nothing registered")
	list, err := st.List(context.Background(), typed.Kind[*family.Parent]())
	require.NoError(t, err)
	assert.Empty(t, list.Items, "nothing written")
}
