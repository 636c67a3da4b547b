package boltdb_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/inmem/boltdb"
)

type copySpec struct{ A int }

type copyDef struct{}

func (copyDef) Definition() typed.Definition {
	return typed.Definition{Type: "Copies.test.resgraph.dev", DefaultNamespace: testNS}
}

type pairCopy = typed.Resource[copySpec, copyDef]

// TestS7_AChangeMadeInPlaceIsNeverPersisted is issue 27's reproduction on
// a bbolt file, with the production guard (inmem.WithMutationGuard, the
// default outside test binaries): a TransformFunc changes its input — a
// read-only snapshot — in place, then the input is torn down (a write that
// copies the stored version, as the finalizer edit of the issue did). The
// change is reported at ERROR naming the controller, the teardown is
// written, and the file holds the input as it was written, torn down:
// never with the change.
func TestS7_AChangeMadeInPlaceIsNeverPersisted(t *testing.T) {
	path := dbPath(t)
	reg := registry()
	codec.MustRegister[copySpec, copyDef](reg)
	st, err := boltdb.Open(path, reg, boltdb.WithStateOptions(inmem.WithMutationGuard()))
	require.NoError(t, err)
	ctrl := transform.NewController(transform.Settings[*pair, *pairCopy]{
		Name: "PairToCopy",
		MapMetadataFunc: func(p *pair) *pairCopy {
			return typed.New[copySpec, copyDef](resource.NewMetadata(testNS, "Copies.test.resgraph.dev", p.Metadata().ID(), resource.VersionUndefined), copySpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in *pair, out *pairCopy) error {
			in.TypedSpec().B = 99 // the bug: in is a shared read-only snapshot
			out.TypedSpec().A = in.TypedSpec().A
			return nil
		},
	}, transform.WithInputFinalizers())
	core, logs := observer.New(zapcore.InfoLevel)
	e := runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithoutLeakCheck(),
		runtimetest.WithLogger(zap.New(core)), runtimetest.WithControllers(ctrl))
	runtimetest.Create(t, st, newPair("a", 1))
	runtimetest.AssertResource[*pairCopy](t, st, "a", nil)
	runtimetest.Settle(t, e.Runtime)

	// A change of the input: the TransformFunc changes the version that
	// is now current, which the teardown copies.
	require.NoError(t, st.Modify(testContext(t), newPair("a", 0), func(r resource.Resource) error {
		r.(*pair).TypedSpec().A = 2
		return nil
	}))
	runtimetest.AssertResource(t, st, "a", runtimetest.Holds(func(c *pairCopy) bool { return c.TypedSpec().A == 2 }))
	runtimetest.Settle(t, e.Runtime)
	_, err = st.Teardown(testContext(t), ptr("a"))
	require.NoError(t, err, "retried on the version restored")
	runtimetest.Settle(t, e.Runtime)
	found := logs.FilterMessageSnippet("a shared read-only snapshot was changed in place").All()
	require.NotEmpty(t, found)
	assert.Equal(t, zapcore.ErrorLevel, found[0].Level)
	assert.Contains(t, found[0].Message, "by controller PairToCopy")
	require.NoError(t, e.Stop())
	require.NoError(t, st.Close())

	st, err = boltdb.Open(path, reg)
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	r, err := st.Get(testContext(t), ptr("a"))
	require.NoError(t, err)
	assert.Equal(t, resource.PhaseTearingDown, r.Metadata().Phase(), "the teardown was written")
	assert.Equal(t, pairSpec{A: 2}, *r.(*pair).TypedSpec(), "the file never held the change made in place")
}
