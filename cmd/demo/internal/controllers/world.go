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
// a KernelLink KernelLinkObserver writes follows them). The kernel is
// quiet once KernelLinkObserver mirrored a read made after its last
// change (the kernel's channel wakes the observer, which the Runtime's
// idleness does not cover); a plan's kernel never flaps, so every change
// it signals is one it is asked for.
func PlanDaemon() plan.Daemon {
	return plan.Daemon{
		Options: Options(),
		Setup: func(initial []resource.Resource) (plan.System, error) {
			w := &planKernel{}
			k := kernel.New(kernel.Config{Links: KernelLinks(initial), OnChange: w.changed})
			read := func() []kernel.Link {
				w.reading()
				return k.Links()
			}
			return plan.System{
				Register: func(e controller.Engine) error {
					return Register(e, k, WithKernelRead(read), WithKernelSynced(w.synced))
				},
				// LinkApplyController configures the kernel; the kernel
				// wakes KernelLinkObserver, which mirrors it.
				Actors:    []string{LinkApplyControllerName},
				Observers: []string{KernelLinkObserverName},
				Actions:   w.actions,
				Quiet:     w.quiet,
			}, nil
		},
	}
}

// planKernel is what a plan knows of its kernel: the changes it was asked
// for, and how many of them KernelLinkObserver has mirrored.
type planKernel struct {
	mu  sync.Mutex
	log []string
	// read is len(log) when the observer last began to read the kernel,
	// and mirrored is read once that pass ended.
	read, mirrored int
}

// changed is the kernel's OnChange.
func (w *planKernel) changed(what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, "kernel: "+what)
}

// reading notes that the observer reads the kernel: it sees every change
// made so far (and maybe later ones, which it is woken for again).
func (w *planKernel) reading() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.read = len(w.log)
}

func (w *planKernel) synced() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mirrored = w.read
}

// quiet is plan.System.Quiet: the observer mirrored every change.
func (w *planKernel) quiet() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mirrored == len(w.log)
}

func (w *planKernel) actions() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}
