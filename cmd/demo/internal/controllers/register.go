package controllers

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
)

// Option configures [Register].
type Option func(*options)

type options struct {
	kernelNotify <-chan struct{}
	kernelRead   func() []kernel.Link
	kernelSynced func()
}

// WithKernelRead makes KernelLinkObserver read the kernel's links with
// read instead of Kernel.Links (a replay returns the links the recorded
// agent read: sim.World.Observed).
func WithKernelRead(read func() []kernel.Link) Option {
	return func(o *options) { o.kernelRead = read }
}

// WithKernelSynced has KernelLinkObserver call synced after each pass
// that mirrored what it read of the kernel (its writes made): a plan's
// world says it is quiet once the pass after the kernel's last change
// ended (see PlanDaemon).
func WithKernelSynced(synced func()) Option {
	return func(o *options) { o.kernelSynced = synced }
}

// WithKernelNotify makes KernelLinkObserver wait on notify for the
// kernel's changes instead of on the kernel's own notification channel (a
// simulation relays the kernel's notifications: sim.World.Relay).
func WithKernelNotify(notify <-chan struct{}) Option {
	return func(o *options) { o.kernelNotify = notify }
}

// Register registers every controller of the agent with Runtime; k is the
// kernel the agent configures and observes.
func Register(engine controller.Engine, k *kernel.Kernel, opts ...Option) error {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	address, err := NewAddressController()
	if err != nil {
		return err
	}
	for _, c := range []controller.Controller{
		&KernelLinkObserver{Kernel: k, Notify: o.kernelNotify, Read: o.kernelRead, Synced: o.kernelSynced},
		address,
		NewLinkStatusCleanupController(),
		StaticRouteController{},
		NewDefaultRouteController(),
		NewAddressCleanupController(),
		ResolverController{},
	} {
		if err := engine.RegisterController(c); err != nil {
			return fmt.Errorf("register %s: %w", c.Name(), err)
		}
	}
	if err := engine.RegisterQController(NewLinkApplyController(k)); err != nil {
		return fmt.Errorf("register %s: %w", LinkApplyControllerName, err)
	}
	return nil
}
