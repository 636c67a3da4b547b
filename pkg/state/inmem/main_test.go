package inmem

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pairSpec is the spec of the test resources: two ints, as in the
// benchmark workloads.
type pairSpec struct{ A, B int }

type pairDef struct{}

func (pairDef) Definition() typed.Definition {
	return typed.Definition{Type: "Pairs.test.resgraph.dev", DefaultNamespace: "default"}
}

type pair = typed.Resource[pairSpec, pairDef]

const (
	testNS   = "default"
	testType = "Pairs.test.resgraph.dev"
)

var testKind = resource.NewKind(testNS, testType)

func newPair(id string, a int) *pair {
	return typed.New[pairSpec, pairDef](resource.NewMetadata(testNS, testType, id, resource.VersionUndefined), pairSpec{A: a})
}

func ptr(id string) resource.Pointer { return resource.NewPointer(testNS, testType, id) }

// testTimeout bounds every wait in the tests; reaching it is a failure,
// never a condition the tests rely on.
const testTimeout = 20 * time.Second

// recv returns the next event of ch or fails the test.
func recv(t *testing.T, ch <-chan state.Event) state.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(testTimeout):
		require.FailNow(t, "no event")
		return state.Event{}
	}
}

// version returns the version of r as an integer.
func version(r resource.Resource) uint64 { return r.Metadata().Version().Value() }

// specA returns the A field of a test resource.
func specA(t *testing.T, r resource.Resource) int {
	t.Helper()
	p, ok := r.(*pair)
	require.True(t, ok, "resource %T is not a pair", r)
	return p.TypedSpec().A
}

// newTestState returns a state and a context canceled at the end of the
// test.
func newTestState(t *testing.T, opts ...Option) (state.State, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return NewState(opts...), ctx
}

// mustUpdate sets A on the stored resource id and writes it.
func mustUpdate(t *testing.T, ctx context.Context, st state.State, id string, a int) resource.Resource {
	t.Helper()
	r, err := st.Get(ctx, ptr(id))
	require.NoError(t, err)
	r.(*pair).TypedSpec().A = a
	require.NoError(t, st.Update(ctx, r))
	return r
}

// pollInterval is how often require.Eventually checks its condition.
const pollInterval = time.Millisecond

func timeAfter() <-chan time.Time { return time.After(testTimeout) }
