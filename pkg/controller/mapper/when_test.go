package mapper_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// labelled returns machine m1 of cluster c1 with the given extra labels
// ("k=v", or "k" for an empty value).
func labelled(extra ...string) *Machine {
	m := machine("m1", "c1", "a")
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		m.Metadata().Labels().Set(k, v)
	}
	return m
}

// TestWhen_MapsOnlyWhenEveryTermHolds: ByLabel under conditions on other
// labels — exists, equals, in, their negations, several at once, nested
// and joined.
func TestWhen_MapsOnlyWhenEveryTermHolds(t *testing.T) {
	target := typed.Kind[*Cluster]()
	by := mapper.ByLabel[*Machine]("cluster", target)
	cp := resource.LabelExists("role-controlplane")
	for name, c := range map[string]struct {
		f    mapper.Func[*Machine]
		in   *Machine
		want []string
	}{
		"exists, held":          {mapper.When(by, cp), labelled("role-controlplane"), []string{"c1"}},
		"exists, not held":      {mapper.When(by, cp), labelled(), nil},
		"not exists":            {mapper.When(by, resource.LabelExists("role-controlplane", resource.NotMatches)), labelled(), []string{"c1"}},
		"equals":                {mapper.ByLabelWhen[*Machine]("cluster", target, resource.LabelEqual("zone", "a")), labelled("zone=a"), []string{"c1"}},
		"equals another value":  {mapper.ByLabelWhen[*Machine]("cluster", target, resource.LabelEqual("zone", "a")), labelled("zone=b"), nil},
		"in":                    {mapper.When(by, resource.LabelIn("zone", []string{"a", "b"})), labelled("zone=b"), []string{"c1"}},
		"not in":                {mapper.When(by, resource.LabelIn("zone", []string{"a", "b"}, resource.NotMatches)), labelled("zone=b"), nil},
		"every term":            {mapper.When(by, cp, resource.LabelEqual("zone", "a")), labelled("role-controlplane", "zone=b"), nil},
		"nested":                {mapper.When(mapper.When(by, cp), resource.LabelEqual("zone", "a")), labelled("role-controlplane", "zone=a"), []string{"c1"}},
		"joined, either holds":  {mapper.Join(mapper.When(by, cp), mapper.When(by, resource.LabelEqual("zone", "a"))), labelled("zone=a"), []string{"c1"}},
		"joined, neither holds": {mapper.Join(mapper.When(by, cp), mapper.When(by, resource.LabelEqual("zone", "a"))), labelled(), nil},
	} {
		got, err := c.f(t.Context(), zap.NewNop(), nil, c.in)
		require.NoError(t, err, name)
		assert.Equal(t, c.want, ids(got, target), name)
	}
}

// TestWhen_EmptyKeyIsInvalid: a term with an empty key (and ByLabel with
// an empty key) fails every call with an invalid-class error that names
// the term and the fix; a qtransform reports it naming itself.
func TestWhen_EmptyKeyIsInvalid(t *testing.T) {
	target := typed.Kind[*Cluster]()
	for name, f := range map[string]mapper.Func[*Machine]{
		"When":    mapper.When(mapper.ByLabel[*Machine]("cluster", target), resource.LabelExists("")),
		"ByLabel": mapper.ByLabel[*Machine]("", target),
		"nil":     mapper.When[*Machine](nil),
	} {
		_, err := f(t.Context(), zap.NewNop(), nil, labelled())
		require.Error(t, err, name)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.Contains(t, err.Error(), "give", name)
	}
}

// TestMapPointer_PreviousVersionMapsToo (rule Q4, extended): a pointer
// that carries the input's previous version maps it too; the results are
// their union, each pointer once.
func TestMapPointer_PreviousVersionMapsToo(t *testing.T) {
	ctx := t.Context()
	st := inmem.NewState()
	r := qruntime{st: st}
	require.NoError(t, st.Create(ctx, machine("m1", "c1", "a")))
	kind := typed.Kind[*Cluster]()

	got, err := byCluster.MapPointer(ctx, zap.NewNop(), r, controller.NewChangedInput(typed.Pointer[*Machine]("m1"), machine("m1", "c2", "a")))
	require.NoError(t, err)
	assert.Equal(t, []string{"c2", "c1"}, ids(got, kind), "the cluster it left, then the one it joined")

	got, err = byCluster.MapPointer(ctx, zap.NewNop(), r, controller.NewChangedInput(typed.Pointer[*Machine]("m1"), machine("m1", "c1", "z")))
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, ids(got, kind), "one pointer once")

	gone := controller.NewDestroyedInput(machine("m9", "c3", "z")).WithPrevious(machine("m9", "c4", "z"))
	got, err = byCluster.MapPointer(ctx, zap.NewNop(), r, gone)
	require.NoError(t, err)
	assert.Equal(t, []string{"c4", "c3"}, ids(got, kind), "a relabel then a destroy maps both labels")

	got, err = byCluster.MapPointer(ctx, zap.NewNop(), r, controller.NewChangedInput(typed.Pointer[*Machine]("absent"), machine("absent", "c5", "z")))
	require.NoError(t, err)
	assert.Equal(t, []string{"c5"}, ids(got, kind), "an input found gone still maps its previous version")
}

// TestMapPointer_QControllerRelabel: a QController whose MapInput is
// MapPointer updates both clusters when a machine moves between them.
func TestMapPointer_QControllerRelabel(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(clusterSize{}))
	runtimetest.Create(t, e.State, typed.NewDefault[ClusterSpec, ClusterDef]("c1", ClusterSpec{}),
		typed.NewDefault[ClusterSpec, ClusterDef]("c2", ClusterSpec{}))
	runtimetest.Create(t, e.State, machine("m1", "c1", "a"))
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) { asrt.Equal([]string{"1"}, r.TypedSpec().Addresses) })
	_, err := e.State.ModifyWithResult(t.Context(), machine("m1", "", ""), func(r resource.Resource) error {
		r.Metadata().Labels().Set("cluster", "c2")
		return nil
	})
	require.NoError(t, err)
	runtimetest.AssertResource(t, e.State, "c2", func(r *Endpoints, asrt *assert.Assertions) { asrt.Equal([]string{"1"}, r.TypedSpec().Addresses) })
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) { asrt.Equal([]string{"0"}, r.TypedSpec().Addresses) })
}
