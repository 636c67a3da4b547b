// Package porting_test is the worked example of docs/porting.md, compiled
// and run by `make test`: keep the two in step.
package porting_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

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
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// --- Resource types (step 1 of the guide).

// ClusterSpec is the primary input: one cluster.
type ClusterSpec struct {
	Name string `yaml:"name" protobuf:"1"`
}

type ClusterDef struct{}

func (ClusterDef) Definition() typed.Definition {
	return typed.Definition{Type: "Clusters.example.resgraph.dev", DefaultNamespace: "cluster"}
}

type Cluster = typed.Resource[ClusterSpec, ClusterDef]

// MachineStatusSpec is written by each machine; the label "cluster"
// names its cluster.
type MachineStatusSpec struct {
	Address netip.Addr `yaml:"address" protobuf:"1"`
	Ready   bool       `yaml:"ready" protobuf:"2"`
}

type MachineStatusDef struct{}

func (MachineStatusDef) Definition() typed.Definition {
	return typed.Definition{Type: "MachineStatuses.example.resgraph.dev", DefaultNamespace: "cluster"}
}

type MachineStatus = typed.Resource[MachineStatusSpec, MachineStatusDef]

// EndpointsSpec is the output: the addresses of a cluster's ready
// machines, sorted.
type EndpointsSpec struct {
	Addresses []netip.Addr `yaml:"addresses,omitempty" protobuf:"1"`
}

type EndpointsDef struct{}

func (EndpointsDef) Definition() typed.Definition {
	return typed.Definition{Type: "Endpoints.example.resgraph.dev", DefaultNamespace: "cluster"}
}

type Endpoints = typed.Resource[EndpointsSpec, EndpointsDef]

// --- The controller (step 2).

// NewEndpointsController keeps one Endpoints per Cluster.
func NewEndpointsController() *qtransform.QController[*Cluster, *Endpoints] {
	return qtransform.NewQController(
		qtransform.Settings[*Cluster, *Endpoints]{
			Name: "EndpointsController",
			MapMetadataFunc: func(c *Cluster) *Endpoints {
				return typed.NewDefault[EndpointsSpec, EndpointsDef](c.Metadata().ID(), EndpointsSpec{})
			},
			UnmapMetadataFunc: func(e *Endpoints) *Cluster {
				return typed.NewDefault[ClusterSpec, ClusterDef](e.Metadata().ID(), ClusterSpec{})
			},
			TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, c *Cluster, e *Endpoints) error {
				machines, err := safe.ReaderListAll[*MachineStatus](ctx, r,
					state.WithLabelQuery(resource.LabelEqual("cluster", c.Metadata().ID())))
				if err != nil {
					return err
				}
				ready := machines.
					Filter(func(m *MachineStatus) bool { return m.TypedSpec().Ready }).
					SortFunc(func(a, b *MachineStatus) int { return a.TypedSpec().Address.Compare(b.TypedSpec().Address) })
				e.TypedSpec().Addresses = nil
				for m := range ready.All() {
					e.TypedSpec().Addresses = append(e.TypedSpec().Addresses, m.TypedSpec().Address)
				}
				return nil
			},
		},
		qtransform.WithExtraMappedInput(mapper.ByLabel[*MachineStatus]("cluster", typed.Kind[*Cluster]())),
	)
}

// --- The test (step 3).

func cluster(id string) *Cluster {
	return typed.NewDefault[ClusterSpec, ClusterDef](id, ClusterSpec{Name: id})
}

func machine(id, clusterID, addr string, ready bool) *MachineStatus {
	m := typed.NewDefault[MachineStatusSpec, MachineStatusDef](id, MachineStatusSpec{Address: netip.MustParseAddr(addr), Ready: ready})
	m.Metadata().Labels().Set("cluster", clusterID)
	return m
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func TestEndpointsController(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.WithQControllers(NewEndpointsController()))
	runtimetest.SetTimeout(t, 5*time.Second)

	runtimetest.Create(t, e.State,
		cluster("c1"),
		machine("m1", "c1", "10.0.0.2", true),
		machine("m2", "c1", "10.0.0.1", true),
		machine("m3", "c1", "10.0.0.3", false),
	)

	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal(addrs("10.0.0.1", "10.0.0.2"), r.TypedSpec().Addresses)
	})

	// m3 becomes ready: the mapper requeues c1, named by m3's label.
	_, err := safe.StateUpdateWithConflicts(t.Context(), e.State, typed.Pointer[*MachineStatus]("m3"),
		func(m *MachineStatus) error {
			m.TypedSpec().Ready = true
			return nil
		})
	require.NoError(t, err)

	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal(addrs("10.0.0.1", "10.0.0.2", "10.0.0.3"), r.TypedSpec().Addresses)
	})

	// m1 is destroyed: its last labels still name c1 (Q4).
	require.NoError(t, e.State.Destroy(t.Context(), typed.Pointer[*MachineStatus]("m1")))

	runtimetest.AssertResource(t, e.State, "c1", func(r *Endpoints, asrt *assert.Assertions) {
		asrt.Equal(addrs("10.0.0.1", "10.0.0.3"), r.TypedSpec().Addresses)
	})

	// The cluster goes: its endpoints are torn down and destroyed first,
	// then the controller's finalizer leaves the cluster.
	runtimetest.Destroy[*Cluster](t, e.State, []resource.ID{"c1"})
	runtimetest.AssertNoResource[*Endpoints](t, e.State, "c1")
}
