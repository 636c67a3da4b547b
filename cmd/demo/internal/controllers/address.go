package controllers

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/destroy"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// AddressController keeps one AddressSpec per address of every link that is
// up (LinkStatus running with Up set, LinkSpec running). It creates a link's
// addresses only once LinkStatusCleanupController holds the LinkStatus, so
// that no address ever exists that a teardown of its link could outrun.
//
// An address that is no longer wanted is torn down, not destroyed: routes
// may still go through it, and AddressCleanupController holds it until they
// are gone. The controller is wrapped with destroy.Wrap (see
// [NewAddressController]), which destroys its torn-down addresses once
// their finalizers are gone. An address wanted again while it is still
// tearing down is recreated once it is destroyed.
type AddressController struct{}

// NewAddressController returns the AddressController wrapped so that its
// torn-down addresses are destroyed once nothing holds them.
func NewAddressController() (controller.Controller, error) {
	return destroy.Wrap(AddressController{}, resource.NewKind(netres.Namespace, netres.AddressSpecType))
}

// Name implements controller.Controller.
func (AddressController) Name() string { return AddressControllerName }

// Inputs implements controller.Controller.
func (AddressController) Inputs() []controller.Input {
	return []controller.Input{
		input(netres.LinkSpecType, controller.InputWeak),
		input(netres.LinkStatusType, controller.InputWeak),
	}
}

// Outputs implements controller.Controller.
func (AddressController) Outputs() []controller.Output {
	return []controller.Output{{Type: netres.AddressSpecType, Kind: controller.OutputExclusive}}
}

// Run implements controller.Controller.
func (c AddressController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	return runLoop(ctx, r, nil, c.reconcile)
}

func (AddressController) reconcile(ctx context.Context, r controller.Runtime) error {
	specs, err := safe.ReaderListAll[*netres.LinkSpec](ctx, r)
	if err != nil {
		return err
	}
	wantLinks := make(map[string]netres.LinkSpecSpec)
	for s := range specs.All() {
		if s.Metadata().Phase() == resource.PhaseRunning {
			wantLinks[s.Metadata().ID()] = *s.TypedSpec()
		}
	}
	statuses, err := safe.ReaderListAll[*netres.LinkStatus](ctx, r)
	if err != nil {
		return err
	}
	desired := make(map[resource.ID]netres.AddressSpecSpec)
	for st := range statuses.All() {
		name := st.Metadata().ID()
		spec, ok := wantLinks[name]
		if !ok || st.Metadata().Phase() != resource.PhaseRunning || !st.TypedSpec().Up ||
			!st.Metadata().Finalizers().Has(LinkStatusCleanupControllerName) {
			continue
		}
		for _, a := range netres.PlanAddresses(name, spec) {
			desired[netres.AddressID(name, a.Address)] = a
		}
	}

	existing, err := safe.ReaderListAll[*netres.AddressSpec](ctx, r)
	if err != nil {
		return err
	}
	tearingDown := make(map[resource.ID]bool)
	for a := range existing.All() {
		md := a.Metadata()
		if md.Phase() != resource.PhaseRunning {
			tearingDown[md.ID()] = true
			continue
		}
		if _, want := desired[md.ID()]; want {
			continue
		}
		if _, err := r.Teardown(ctx, md); err != nil {
			return fmt.Errorf("tear down address %s: %w", md.ID(), err)
		}
	}

	for _, id := range slices.Sorted(maps.Keys(desired)) { // in order: the same state, the same writes
		a := desired[id]
		if tearingDown[id] {
			continue // recreated once destroyed: the destroy wakes us up
		}
		if err := safe.WriterModify(ctx, r, netres.NewAddressSpec(id), func(out *netres.AddressSpec) error {
			out.Metadata().Labels().Set(netres.LinkLabel, a.Link)
			*out.TypedSpec() = a
			return nil
		}); err != nil {
			return fmt.Errorf("write address %s: %w", id, err)
		}
	}
	return nil
}
