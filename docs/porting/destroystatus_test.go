package porting_test

// The second worked example of docs/porting.md: a management plane's
// "cluster destroy status", a qtransform that, while a cluster tears
// down, reports how many of its machine sets and machines are left. It
// uses what the established runtime's users build such controllers on:
// a teardown gate (WithIgnoreTeardownUntil), the skip signal
// (generic.ErrSkip), mapped inputs by label, one of them conditional
// (mapper.ByLabelWhen), and the controller's own finalizer on the
// cluster (qtransform's default).

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/controller/mapper"
	"github.com/resgraph/resgraph/pkg/generic"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
)

// Labels of the cluster's members.
const (
	LabelCluster    = "cluster"     // the cluster a machine set or a machine belongs to
	LabelMachineSet = "machine-set" // the machine set a machine belongs to
)

// MachineSetSpec and ClusterMachineSpec are the cluster's members, named
// by their labels.
type (
	MachineSetSpec     struct{}
	MachineSetDef      struct{}
	MachineSet         = typed.Resource[MachineSetSpec, MachineSetDef]
	ClusterMachineSpec struct{}
	ClusterMachineDef  struct{}
	ClusterMachine     = typed.Resource[ClusterMachineSpec, ClusterMachineDef]
)

func (MachineSetDef) Definition() typed.Definition {
	return typed.Definition{Type: "MachineSets.example.resgraph.dev", DefaultNamespace: "cluster"}
}

func (ClusterMachineDef) Definition() typed.Definition {
	return typed.Definition{Type: "ClusterMachines.example.resgraph.dev", DefaultNamespace: "cluster"}
}

// ClusterDestroyStatusSpec is the output: what is left of a cluster that
// tears down.
type ClusterDestroyStatusSpec struct {
	Phase                string `yaml:"phase"`
	RemainingMachineSets int    `yaml:"remainingMachineSets"`
	RemainingMachines    int    `yaml:"remainingMachines"`
}

type ClusterDestroyStatusDef struct{}

func (ClusterDestroyStatusDef) Definition() typed.Definition {
	return typed.Definition{Type: "ClusterDestroyStatuses.example.resgraph.dev", DefaultNamespace: "cluster"}
}

type ClusterDestroyStatus = typed.Resource[ClusterDestroyStatusSpec, ClusterDestroyStatusDef]

// --- The controller: the port.

// ClusterDestroyStatusControllerName is the controller's name, and its
// finalizer on every cluster.
const ClusterDestroyStatusControllerName = "ClusterDestroyStatusController"

// NewClusterDestroyStatusController reports, while a cluster tears down
// and until every other finalizer has left it, its machine sets and
// machines that are left; there is no status before the teardown.
func NewClusterDestroyStatusController() *qtransform.QController[*Cluster, *ClusterDestroyStatus] {
	return qtransform.NewQController(
		qtransform.Settings[*Cluster, *ClusterDestroyStatus]{
			Name: ClusterDestroyStatusControllerName,
			MapMetadataFunc: func(c *Cluster) *ClusterDestroyStatus {
				return typed.NewDefault[ClusterDestroyStatusSpec, ClusterDestroyStatusDef](c.Metadata().ID(), ClusterDestroyStatusSpec{})
			},
			UnmapMetadataFunc: func(s *ClusterDestroyStatus) *Cluster {
				return typed.NewDefault[ClusterSpec, ClusterDef](s.Metadata().ID(), ClusterSpec{})
			},
			TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, c *Cluster, s *ClusterDestroyStatus) error {
				if c.Metadata().Phase() == resource.PhaseRunning {
					return generic.ErrSkip // no status before the teardown
				}
				ofCluster := resource.LabelEqual(LabelCluster, c.Metadata().ID())
				sets, err := safe.ReaderListAll[*MachineSet](ctx, r, state.WithLabelQuery(ofCluster))
				if err != nil {
					return err
				}
				machines, err := safe.ReaderListAll[*ClusterMachine](ctx, r,
					state.WithLabelQuery(ofCluster, resource.LabelExists(LabelMachineSet)))
				if err != nil {
					return err
				}
				*s.TypedSpec() = ClusterDestroyStatusSpec{Phase: "Destroying", RemainingMachineSets: sets.Len(), RemainingMachines: machines.Len()}
				return nil
			},
		},
		// Computed while the cluster tears down, until only this
		// controller's finalizer is left on it.
		qtransform.WithIgnoreTeardownUntil(ClusterDestroyStatusControllerName),
		qtransform.WithExtraMappedInput(mapper.ByLabel[*MachineSet](LabelCluster, typed.Kind[*Cluster]())),
		// Only machines of a machine set count.
		qtransform.WithExtraMappedInput(mapper.ByLabelWhen[*ClusterMachine](LabelCluster, typed.Kind[*Cluster](),
			resource.LabelExists(LabelMachineSet))),
	)
}

// --- The upstream test's scenario.

func member[S any, D typed.DefinitionProvider](id, cluster, set string) *typed.Resource[S, D] {
	r := typed.NewDefault[S, D](id, *new(S))
	r.Metadata().Labels().Set(LabelCluster, cluster)
	if set != "" {
		r.Metadata().Labels().Set(LabelMachineSet, set)
	}
	return r
}

func TestClusterDestroyStatusController(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(NewClusterDestroyStatusController()),
		runtimetest.WithOutsideWriters(typed.Kind[*Cluster](), typed.Kind[*MachineSet](), typed.Kind[*ClusterMachine]()))
	ctx := t.Context()
	cluster := typed.NewDefault[ClusterSpec, ClusterDef]("c1", ClusterSpec{})
	cluster.Metadata().Finalizers().Add("ClusterController") // the other controller's
	runtimetest.Create(t, e.State, cluster,
		member[MachineSetSpec, MachineSetDef]("ms1", "c1", ""), member[MachineSetSpec, MachineSetDef]("ms2", "c1", ""),
		member[ClusterMachineSpec, ClusterMachineDef]("m1", "c1", "ms1"), member[ClusterMachineSpec, ClusterMachineDef]("m2", "c1", "ms1"),
		member[ClusterMachineSpec, ClusterMachineDef]("m3", "c1", "ms2"))

	// The controller's finalizer is added; no status before the teardown.
	runtimetest.AssertResource(t, e.State, "c1", func(c *Cluster, asrt *assert.Assertions) {
		asrt.True(c.Metadata().Finalizers().Has(ClusterDestroyStatusControllerName))
	})
	runtimetest.Settle(t, e.Runtime)
	runtimetest.AssertNoResource[*ClusterDestroyStatus](t, e.State, "c1")

	// The teardown: the counts go down as the members go.
	_, err := e.State.Teardown(ctx, cluster.Metadata())
	require.NoError(t, err)
	left := func(sets, machines int) {
		t.Helper()
		runtimetest.AssertResource(t, e.State, "c1", func(s *ClusterDestroyStatus, asrt *assert.Assertions) {
			asrt.Equal(ClusterDestroyStatusSpec{Phase: "Destroying", RemainingMachineSets: sets, RemainingMachines: machines}, *s.TypedSpec())
		})
	}
	left(2, 3)
	for i, id := range []resource.ID{"m1", "m2", "m3"} {
		runtimetest.Destroy[*ClusterMachine](t, e.State, []resource.ID{id})
		left(2, 2-i)
	}
	runtimetest.Destroy[*MachineSet](t, e.State, []resource.ID{"ms1", "ms2"})
	left(0, 0)

	// The other finalizer goes: the status goes, then this controller's
	// finalizer, and the cluster can be destroyed.
	require.NoError(t, e.State.RemoveFinalizer(ctx, cluster.Metadata(), "ClusterController"))
	runtimetest.AssertNoResource[*ClusterDestroyStatus](t, e.State, "c1")
	runtimetest.AssertResource(t, e.State, "c1", func(c *Cluster, asrt *assert.Assertions) {
		asrt.True(c.Metadata().Finalizers().Empty())
	})
	runtimetest.Destroy[*Cluster](t, e.State, []resource.ID{"c1"})
}
