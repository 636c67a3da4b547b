package controllers

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// KernelLinkObserver mirrors the kernel's links into KernelLink resources:
// one per kernel link, updated on every kernel change, destroyed when the
// kernel link is gone. It has no inputs: the kernel's notification channel
// wakes it up, besides the Runtime's start event.
type KernelLinkObserver struct {
	Kernel *kernel.Kernel
	// Notify, when set, wakes it instead of the kernel's notification
	// channel (a simulation passes the kernel's notifications on when its
	// schedule says: sim.World.Relay).
	Notify <-chan struct{}
	// Read, when set, reads the kernel's links instead of Kernel.Links (a
	// replay returns the links the recorded agent read: sim.World.Observed).
	Read func() []kernel.Link
	// Synced, when set, is called after each pass that mirrored what it
	// read (its writes and its cleanup made).
	Synced func()
}

// Name implements controller.Controller.
func (*KernelLinkObserver) Name() string { return KernelLinkObserverName }

// Inputs implements controller.Controller.
func (*KernelLinkObserver) Inputs() []controller.Input { return nil }

// Outputs implements controller.Controller.
func (*KernelLinkObserver) Outputs() []controller.Output {
	return []controller.Output{{Type: netres.KernelLinkType, Kind: controller.OutputExclusive}}
}

// Run implements controller.Controller.
func (c *KernelLinkObserver) Run(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
	notify := c.Notify
	if notify == nil {
		notify = c.Kernel.Notify()
	}
	return runLoop(ctx, r, notify, c.sync)
}

func (c *KernelLinkObserver) sync(ctx context.Context, r controller.Runtime) error {
	r.StartTrackingOutputs()
	read := c.Read
	if read == nil {
		read = c.Kernel.Links
	}
	for _, l := range read() {
		if err := writeKernelLink(ctx, r, l); err != nil {
			return fmt.Errorf("write kernel link %s: %w", l.Name, err)
		}
	}
	if err := r.CleanupOutputs(ctx, resource.NewKind(netres.Namespace, netres.KernelLinkType)); err != nil {
		return err
	}
	if c.Synced != nil {
		c.Synced()
	}
	return nil
}

// writeKernelLink writes the KernelLink of l (see modifyOutput).
func writeKernelLink(ctx context.Context, r controller.Runtime, l kernel.Link) error {
	return modifyOutput(ctx, r, func() *netres.KernelLink { return netres.NewKernelLink(l.Name) }, func(kl *netres.KernelLink) error {
		*kl.TypedSpec() = netres.KernelLinkSpec{HardwareAddr: l.HardwareAddr, Index: l.Index, MTU: l.MTU, Up: l.Up}
		return nil
	})
}
