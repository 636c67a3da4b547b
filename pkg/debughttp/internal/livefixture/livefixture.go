// Package livefixture is a daemon-shaped graph for the live page's tests:
// 20 controllers over resource kinds in 3 namespaces, shaped like a
// network configuration daemon — config controllers derive specs from a
// machine config into network-config, merge controllers merge each spec
// type from network-config into the same type in network (reading and
// writing one type in two namespaces), spec controllers apply specs to
// statuses, and the last ones derive files and time status back into
// runtime. A driver changes the machine configs at a steady pace, so that
// every edge carries traffic.
package livefixture

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// The namespaces.
const (
	NSRuntime = "runtime"
	NSConfig  = "network-config"
	NSNetwork = "network"
)

// Types. Every resource is a [Resource]; its type is in its metadata.
const (
	MachineConfigs   = "MachineConfigs.config.resgraph.dev"
	HostnameSpecs    = "HostnameSpecs.net.resgraph.dev"
	LinkSpecs        = "LinkSpecs.net.resgraph.dev"
	AddressSpecs     = "AddressSpecs.net.resgraph.dev"
	RouteSpecs       = "RouteSpecs.net.resgraph.dev"
	ResolverSpecs    = "ResolverSpecs.net.resgraph.dev"
	TimeServerSpecs  = "TimeServerSpecs.net.resgraph.dev"
	LinkStatuses     = "LinkStatuses.net.resgraph.dev"
	AddressStatuses  = "AddressStatuses.net.resgraph.dev"
	RouteStatuses    = "RouteStatuses.net.resgraph.dev"
	HostnameStatuses = "HostnameStatuses.net.resgraph.dev"
	ResolverStatuses = "ResolverStatuses.net.resgraph.dev"
	NodeAddresses    = "NodeAddresses.net.resgraph.dev"
	EtcFileSpecs     = "EtcFileSpecs.files.resgraph.dev"
	TimeStatuses     = "TimeStatuses.time.resgraph.dev"
)

// Spec is every fixture resource's spec: a value derived from the machine
// config's generation.
type Spec struct{ Value int }

type def struct{}

func (def) Definition() typed.Definition {
	return typed.Definition{Type: MachineConfigs, DefaultNamespace: NSRuntime}
}

// Resource is a fixture resource.
type Resource = typed.Resource[Spec, def]

// New returns a resource of ns/typ/id with value v.
func New(ns, typ, id string, v int) *Resource {
	return typed.New[Spec, def](resource.NewMetadata(ns, typ, id, resource.VersionUndefined), Spec{Value: v})
}

// Configs are the IDs of the machine configs the driver changes.
var Configs = []string{"node-a", "node-b", "node-c"}

// specTypes are the spec types the config controllers derive and the
// merge controllers merge.
var specTypes = []struct{ name, typ string }{
	{"Hostname", HostnameSpecs}, {"Link", LinkSpecs}, {"Address", AddressSpecs},
	{"Route", RouteSpecs}, {"Resolver", ResolverSpecs}, {"TimeServer", TimeServerSpecs},
}

// in is an input of kind k on ns/typ.
func in(ns, typ string, k controller.InputKind) controller.Input {
	return controller.Input{Namespace: ns, Type: typ, Kind: k}
}

// Controllers returns the fixture's Controllers and QControllers: 20 in
// all.
func Controllers() ([]controller.Controller, []controller.QController) {
	var cs []controller.Controller
	for _, s := range specTypes {
		cs = append(cs, &mapper{
			name: s.name + "ConfigController", from: in(NSRuntime, MachineConfigs, controller.InputStrong),
			toNS: NSConfig, toType: s.typ, shared: true, idOf: func(id string) string { return s.name + "-" + id },
		})
	}
	for _, s := range specTypes {
		cs = append(cs, &mapper{
			name: s.name + "MergeController", from: in(NSConfig, s.typ, controller.InputStrong),
			toNS: NSNetwork, toType: s.typ, shared: true,
		})
	}
	cs = append(cs,
		&mapper{name: "RouteSpecController", from: in(NSNetwork, RouteSpecs, controller.InputStrong),
			also: []controller.Input{in(NSNetwork, LinkStatuses, controller.InputWeak)}, toNS: NSNetwork, toType: RouteStatuses},
		&mapper{name: "HostnameSpecController", from: in(NSNetwork, HostnameSpecs, controller.InputStrong),
			toNS: NSNetwork, toType: HostnameStatuses},
		&mapper{name: "ResolverSpecController", from: in(NSNetwork, ResolverSpecs, controller.InputStrong),
			toNS: NSNetwork, toType: ResolverStatuses},
		&mapper{name: "NodeAddressController", from: in(NSNetwork, AddressStatuses, controller.InputWeak),
			also: []controller.Input{in(NSNetwork, LinkStatuses, controller.InputWeak)}, toNS: NSNetwork, toType: NodeAddresses},
		&mapper{name: "EtcFileController", from: in(NSNetwork, HostnameStatuses, controller.InputWeak),
			also: []controller.Input{in(NSNetwork, NodeAddresses, controller.InputWeak), in(NSNetwork, ResolverStatuses, controller.InputWeak)},
			toNS: NSRuntime, toType: EtcFileSpecs},
		&mapper{name: "TimeSyncController", from: in(NSNetwork, TimeServerSpecs, controller.InputWeak),
			toNS: NSRuntime, toType: TimeStatuses},
	)
	qs := []controller.QController{
		&qmapper{name: "LinkSpecController", primary: in(NSNetwork, LinkSpecs, controller.InputQPrimary), toNS: NSNetwork, toType: LinkStatuses},
		&qmapper{name: "AddressSpecController", primary: in(NSNetwork, AddressSpecs, controller.InputQPrimary),
			mapped: []controller.Input{in(NSNetwork, LinkStatuses, controller.InputQMapped)}, toNS: NSNetwork, toType: AddressStatuses},
	}
	return cs, qs
}

// mapper is a Controller that keeps, for every resource of its input
// from, a resource of toNS/toType with the same value (and an ID made by
// idOf, the same by default); its other inputs (also) only wake it. A
// spec type written by both a config and a merge controller is a shared
// output.
type mapper struct {
	name         string
	from         controller.Input
	also         []controller.Input
	toNS, toType string
	shared       bool
	idOf         func(string) string
}

func (m *mapper) Name() string { return m.name }
func (m *mapper) Inputs() []controller.Input {
	return append([]controller.Input{m.from}, m.also...)
}

func (m *mapper) Outputs() []controller.Output {
	if m.shared {
		return []controller.Output{{Type: m.toType, Kind: controller.OutputShared}}
	}
	return []controller.Output{{Type: m.toType, Kind: controller.OutputExclusive}}
}

func (m *mapper) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.EventCh():
		}
		list, err := r.List(ctx, resource.NewKind(m.from.Namespace, m.from.Type), state.WithReadOnlyList())
		if err != nil {
			return err
		}
		for _, it := range list.Items {
			id := it.Metadata().ID()
			if m.idOf != nil {
				id = m.idOf(id)
			}
			if err := write(ctx, r, m.toNS, m.toType, id, valueOf(it)); err != nil {
				return err
			}
		}
	}
}

// qmapper is a QController that keeps, for every resource of its primary
// input, a resource of toNS/toType with the same value and ID; a change
// of a mapped input requeues the item of the same ID.
type qmapper struct {
	name         string
	primary      controller.Input
	mapped       []controller.Input
	toNS, toType string
}

func (q *qmapper) Name() string { return q.name }
func (q *qmapper) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs:  append([]controller.Input{q.primary}, q.mapped...),
		Outputs: []controller.Output{{Type: q.toType, Kind: controller.OutputExclusive}},
	}
}

func (q *qmapper) Reconcile(ctx context.Context, _ *zap.Logger, r controller.QRuntime, p resource.Pointer) error {
	cur, err := r.Get(ctx, p, state.WithReadOnlyGet())
	if state.IsNotFoundError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return write(ctx, r, q.toNS, q.toType, p.ID(), valueOf(cur))
}

func (q *qmapper) MapInput(_ context.Context, _ *zap.Logger, _ controller.QRuntime, p resource.Pointer) ([]resource.Pointer, error) {
	// A link status maps to the address spec of the same link.
	return []resource.Pointer{resource.NewPointer(q.primary.Namespace, q.primary.Type, p.ID())}, nil
}

// write sets the value of the output ns/typ/id.
func write(ctx context.Context, w controller.Writer, ns, typ, id string, v int) error {
	return w.Modify(ctx, New(ns, typ, id, 0), func(r resource.Resource) error {
		res, ok := r.(*Resource)
		if !ok {
			return fmt.Errorf("livefixture: %T is not a fixture resource", r)
		}
		res.TypedSpec().Value = v
		return nil
	})
}

func valueOf(r resource.Resource) int {
	if res, ok := r.(*Resource); ok {
		return res.TypedSpec().Value
	}
	return 0
}

// Drive creates the machine configs and then changes one of them every
// interval, in turn, until ctx is done; it returns the first error of the
// state other than ctx's.
func Drive(ctx context.Context, st state.State, interval time.Duration) error {
	for _, id := range Configs {
		if err := st.Create(ctx, New(NSRuntime, MachineConfigs, id, 0)); err != nil && !state.IsConflictError(err) {
			return err
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		p := resource.NewPointer(NSRuntime, MachineConfigs, Configs[i%len(Configs)])
		if _, err := st.UpdateWithConflicts(ctx, p, func(r resource.Resource) error {
			r.(*Resource).TypedSpec().Value++
			return nil
		}); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}
