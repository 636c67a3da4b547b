package controllers

import (
	"sync"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/runtime/plan"

	"github.com/resgraph/resgraph/cmd/demo/internal/kernel"
	"github.com/resgraph/resgraph/cmd/demo/internal/netres"
)

// Options are the agent's Runtime options: LinkSpecs and LinkStatuses
// cached (several controllers read them on every pass).
func Options() []runtime.Option {
	return []runtime.Option{
		runtime.WithCachedResource(netres.ConfigNamespace, netres.LinkSpecType),
		runtime.WithCachedResource(netres.Namespace, netres.LinkStatusType),
		// The intent's kind: written by the intent (apply), not by a
		// controller — expected, so not warned about.
		runtime.WithOutsideWriters(resource.NewKind(netres.ConfigNamespace, netres.LinkSpecType)),
	}
}

// KernelLinks returns the kernel links the KernelLinks of a state describe
// (sorted as the state is): the links of a kernel in the condition of a
// recorded or live state.
func KernelLinks(st []resource.Resource) []kernel.Link {
	var out []kernel.Link
	for _, r := range st {
		if kl, ok := r.(*netres.KernelLink); ok {
			s := kl.TypedSpec()
			out = append(out, kernel.Link{Name: kl.Metadata().ID(), HardwareAddr: s.HardwareAddr, Index: s.Index, MTU: s.MTU, Up: s.Up})
		}
	}
	return out
}

// PlanDaemon is the agent as package plan runs it: its controllers over
// a fake kernel that starts with the links of the planned state and logs
// what it is asked to do (the plan's world actions, LinkApplyController's:
// a KernelLink KernelLinkObserver writes follows them).
func PlanDaemon() plan.Daemon {
	return plan.Daemon{
		Options: Options(),
		Setup: func(initial []resource.Resource) (plan.System, error) {
			var mu sync.Mutex
			var log []string
			k := kernel.New(kernel.Config{Links: KernelLinks(initial), OnChange: func(what string) {
				mu.Lock()
				defer mu.Unlock()
				log = append(log, "kernel: "+what)
			}})
			return plan.System{
				Register: func(e controller.Engine) error { return Register(e, k) },
				// LinkApplyController configures the kernel; the kernel
				// wakes KernelLinkObserver, which mirrors it.
				Actors:    []string{LinkApplyControllerName},
				Observers: []string{KernelLinkObserverName},
				Actions: func() []string {
					mu.Lock()
					defer mu.Unlock()
					return append([]string(nil), log...)
				},
			}, nil
		},
	}
}
