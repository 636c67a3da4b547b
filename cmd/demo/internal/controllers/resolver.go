package controllers

import (
	"context"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/safe"

	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// ResolverController aggregates the DNS servers of every link that is up
// into the one ResolverConfig (see netres.PlanResolver for the order). The
// ResolverConfig always exists once the controller ran, possibly empty.
type ResolverController struct{}

// Name implements controller.Controller.
func (ResolverController) Name() string { return ResolverControllerName }

// Inputs implements controller.Controller.
func (ResolverController) Inputs() []controller.Input {
	return []controller.Input{
		input(netres.LinkSpecType, controller.InputWeak),
		input(netres.LinkStatusType, controller.InputWeak),
	}
}

// Outputs implements controller.Controller.
func (ResolverController) Outputs() []controller.Output {
	return []controller.Output{{Type: netres.ResolverConfigType, Kind: controller.OutputExclusive}}
}

// Run implements controller.Controller.
func (c ResolverController) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	return runLoop(ctx, r, nil, c.reconcile)
}

func (ResolverController) reconcile(ctx context.Context, r controller.Runtime) error {
	statuses, err := safe.ReaderListAll[*netres.LinkStatus](ctx, r)
	if err != nil {
		return err
	}
	up := make(map[string]bool)
	for st := range statuses.All() {
		if st.Metadata().Phase() == resource.PhaseRunning && st.TypedSpec().Up {
			up[st.Metadata().ID()] = true
		}
	}
	specs, err := safe.ReaderListAll[*netres.LinkSpec](ctx, r)
	if err != nil {
		return err
	}
	var links []netres.LinkDNS
	for s := range specs.All() {
		if s.Metadata().Phase() == resource.PhaseRunning && up[s.Metadata().ID()] {
			links = append(links, netres.LinkDNS{Link: s.Metadata().ID(), Servers: s.TypedSpec().DNSServers})
		}
	}
	return safe.WriterModify(ctx, r, netres.NewResolverConfig(), func(out *netres.ResolverConfig) error {
		*out.TypedSpec() = netres.PlanResolver(links)
		return nil
	})
}
