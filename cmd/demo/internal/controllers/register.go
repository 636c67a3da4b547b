package controllers

import (
	"fmt"

	"github.com/resgraph/resgraph/pkg/controller"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
)

// Register registers every controller of the agent with engine; k is the
// kernel the agent configures and observes.
func Register(engine controller.Engine, k *kernel.Kernel) error {
	address, err := NewAddressController()
	if err != nil {
		return err
	}
	for _, c := range []controller.Controller{
		&KernelLinkObserver{Kernel: k},
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
