package mapper_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A cluster's endpoint list from its machines: Cluster is the primary
// input, Endpoints the output, and Machines, labelled with their
// cluster, are mapped to the cluster they name.

type ClusterSpec struct{}
type ClusterDef struct{}

func (ClusterDef) Definition() typed.Definition {
	return typed.Definition{Type: "Clusters.test.resgraph.dev", DefaultNamespace: "default"}
}

type Cluster = typed.Resource[ClusterSpec, ClusterDef]

type MachineSpec struct{ Address string }
type MachineDef struct{}

func (MachineDef) Definition() typed.Definition {
	return typed.Definition{Type: "Machines.test.resgraph.dev", DefaultNamespace: "default"}
}

type Machine = typed.Resource[MachineSpec, MachineDef]

type EndpointsSpec struct{ Addresses []string }
type EndpointsDef struct{}

func (EndpointsDef) Definition() typed.Definition {
	return typed.Definition{Type: "Endpoints.test.resgraph.dev", DefaultNamespace: "default"}
}

type Endpoints = typed.Resource[EndpointsSpec, EndpointsDef]

func machine(id, cluster, addr string) *Machine {
	m := typed.NewDefault[MachineSpec, MachineDef](id, MachineSpec{Address: addr})
	if cluster != "" {
		m.Metadata().Labels().Set("cluster", cluster)
	}
	return m
}

// endpoints is the qtransform: the mapper of its extra mapped input is
// mapper.ByLabel, passed as it is (its type is inferred).
func endpoints() controller.QController {
	return qtransform.NewQController(qtransform.Settings[*Cluster, *Endpoints]{
		Name: "endpoints",
		MapMetadataFunc: func(c *Cluster) *Endpoints {
			return typed.NewDefault[EndpointsSpec, EndpointsDef](c.Metadata().ID(), EndpointsSpec{})
		},
		UnmapMetadataFunc: func(e *Endpoints) *Cluster {
			return typed.NewDefault[ClusterSpec, ClusterDef](e.Metadata().ID(), ClusterSpec{})
		},
		TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, c *Cluster, e *Endpoints) error {
			ms, err := safe.ReaderListAll[*Machine](ctx, r, state.WithLabelQuery(resource.LabelEqual("cluster", c.Metadata().ID())))
			if err != nil {
				return err
			}
			e.TypedSpec().Addresses = nil
			for m := range ms.All() {
				e.TypedSpec().Addresses = append(e.TypedSpec().Addresses, m.TypedSpec().Address)
			}
			return nil
		},
	}, qtransform.WithExtraMappedInput(mapper.ByLabel[*Machine]("cluster", typed.Kind[*Cluster]())))
}

// TestByLabel_QTransform: a machine labelled with its cluster requeues
// that cluster, whose endpoints follow the machines, their deletion
// included.
func TestByLabel_QTransform(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(endpoints()))
	runtimetest.Create(t, e.State,
		typed.NewDefault[ClusterSpec, ClusterDef]("c1", ClusterSpec{}),
		typed.NewDefault[ClusterSpec, ClusterDef]("c2", ClusterSpec{}),
	)
	runtimetest.Create(t, e.State, machine("m1", "c1", "10.0.0.1"), machine("m2", "c1", "10.0.0.2"), machine("m3", "c2", "10.0.0.3"))
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"10.0.0.1", "10.0.0.2"}, r.TypedSpec().Addresses)
	})
	runtimetest.AssertResource(t, e.State, "c2", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"10.0.0.3"}, r.TypedSpec().Addresses)
	})
	_, err := safe.StateModifyWithResult(t.Context(), e.State, machine("m2", "", ""), func(m *Machine) error {
		m.TypedSpec().Address = "10.0.0.20"
		return nil
	})
	require.NoError(t, err)
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"10.0.0.1", "10.0.0.20"}, r.TypedSpec().Addresses)
	})

	// A destroyed machine is mapped by its last labels (Q4): its cluster's
	// endpoints drop it.
	require.NoError(t, e.State.Destroy(t.Context(), typed.Pointer[*Machine]("m1")))
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"10.0.0.20"}, r.TypedSpec().Addresses)
	})
}

// TestFuncs: what each mapper maps an input to.
func TestFuncs(t *testing.T) {
	ctx := t.Context()
	target := typed.Kind[*Cluster]()
	m := machine("m1", "c1", "a")
	require.NoError(t, m.Metadata().SetOwner("machines-ctrl"))
	bare := machine("m2", "", "b")

	for name, c := range map[string]struct {
		f    mapper.Func[*Machine]
		in   *Machine
		want []string
	}{
		"label":         {mapper.ByLabel[*Machine]("cluster", target), m, []string{"c1"}},
		"no label":      {mapper.ByLabel[*Machine]("cluster", target), bare, nil},
		"id":            {mapper.ByID[*Machine](target), m, []string{"m1"}},
		"owner":         {mapper.ByOwner[*Machine](target), m, []string{"machines-ctrl"}},
		"no owner":      {mapper.ByOwner[*Machine](target), bare, nil},
		"another label": {mapper.ByLabel[*Machine]("zone", target), m, nil},
	} {
		got, err := c.f(ctx, zap.NewNop(), nil, c.in)
		require.NoError(t, err, name)
		assert.Equal(t, c.want, ids(got, target), name)
	}
}

// ids returns the IDs of ptrs, checking that they are of kind k.
func ids(ptrs []resource.Pointer, k resource.Kind) []string {
	var out []string
	for _, p := range ptrs {
		if p.Namespace() != k.Namespace() || p.Type() != k.Type() {
			return []string{"wrong kind: " + resource.PointerString(p)}
		}
		out = append(out, p.ID())
	}
	return out
}

// qruntime is a QRuntime over a state (reads only).
type qruntime struct {
	controller.QRuntime
	st state.State
}

func (q qruntime) Get(ctx context.Context, p resource.Pointer, opts ...state.GetOption) (resource.Resource, error) {
	return q.st.Get(ctx, p, opts...)
}

// TestMapPointer: in a MapInput, the pointer is resolved to the current
// resource, or to the last version a destroyed input carries; an input
// that is gone without it maps to nothing; another Go type is an invalid
// error; so is a nil Func.
func TestMapPointer(t *testing.T) {
	ctx := t.Context()
	st := inmem.NewState()
	r := qruntime{st: st}
	byCluster := mapper.ByLabel[*Machine]("cluster", typed.Kind[*Cluster]())
	require.NoError(t, st.Create(ctx, machine("m1", "c1", "a")))

	got, err := byCluster.MapPointer(ctx, zap.NewNop(), r, typed.Pointer[*Machine]("m1"))
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, ids(got, typed.Kind[*Cluster]()))

	last := machine("m9", "c2", "z")
	got, err = byCluster.MapPointer(ctx, zap.NewNop(), r, controller.NewDestroyedInput(last))
	require.NoError(t, err)
	assert.Equal(t, []string{"c2"}, ids(got, typed.Kind[*Cluster]()), "a destroyed input maps by its last labels")

	got, err = byCluster.MapPointer(ctx, zap.NewNop(), r, typed.Pointer[*Machine]("absent"))
	require.NoError(t, err)
	assert.Empty(t, got)

	other := typed.NewDefault[ClusterSpec, ClusterDef]("c1", ClusterSpec{})
	require.NoError(t, st.Create(ctx, other))
	_, err = byCluster.MapPointer(ctx, zap.NewNop(), r, other.Metadata())
	assert.True(t, state.IsInvalidError(err), "%v", err)

	var nilFunc mapper.Func[*Machine]
	_, err = nilFunc.MapPointer(ctx, zap.NewNop(), r, typed.Pointer[*Machine]("m1"))
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

// clusterSize is a QController: its primary input is Cluster, its mapped
// input Machine, and its MapInput is mapper.ByLabel's MapPointer.
type clusterSize struct{}

var byCluster = mapper.ByLabel[*Machine]("cluster", typed.Kind[*Cluster]())

func (clusterSize) Name() string { return "cluster-size" }
func (clusterSize) Settings() controller.QSettings {
	c, m := typed.Kind[*Cluster](), typed.Kind[*Machine]()
	return controller.QSettings{
		Inputs: []controller.Input{
			{Namespace: c.Namespace(), Type: c.Type(), Kind: controller.InputQPrimary},
			{Namespace: m.Namespace(), Type: m.Type(), Kind: controller.InputQMapped},
		},
		Outputs: []controller.Output{{Type: typed.Kind[*Endpoints]().Type(), Kind: controller.OutputExclusive}},
	}
}

func (clusterSize) MapInput(ctx context.Context, l *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	return byCluster.MapPointer(ctx, l, r, ptr)
}

func (clusterSize) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	ms, err := safe.ReaderListAll[*Machine](ctx, r, state.WithLabelQuery(resource.LabelEqual("cluster", ptr.ID())))
	if err != nil {
		return err
	}
	return safe.WriterModify(ctx, r, typed.NewDefault[EndpointsSpec, EndpointsDef](ptr.ID(), EndpointsSpec{}), func(e *Endpoints) error {
		e.TypedSpec().Addresses = []string{strconv.Itoa(ms.Len())}
		return nil
	})
}

// TestMapPointer_QController: a QController's MapInput built on
// MapPointer requeues the cluster a machine names, when the machine
// changes and when it is destroyed.
func TestMapPointer_QController(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(clusterSize{}))
	runtimetest.Create(t, e.State, typed.NewDefault[ClusterSpec, ClusterDef]("c1", ClusterSpec{}))
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"0"}, r.TypedSpec().Addresses)
	})
	runtimetest.Create(t, e.State, machine("m1", "c1", "a"), machine("m2", "c1", "b"))
	got := runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"2"}, r.TypedSpec().Addresses)
	})
	assert.True(t, strings.HasPrefix(got.Metadata().Owner(), "cluster-size"))

	// A destroyed machine reaches MapInput with its last version (Q4),
	// which MapPointer maps by its label.
	require.NoError(t, e.State.Destroy(t.Context(), typed.Pointer[*Machine]("m2")))
	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal([]string{"1"}, r.TypedSpec().Addresses)
	})
}
