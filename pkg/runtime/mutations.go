package runtime

import (
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// watchMutations subscribes, while Run runs, to the changes of shared
// snapshots that the state's production guard finds (rule S7; see
// [state.MutationNotifier]): each is logged at ERROR naming the
// controllers that held the version changed. It returns the function that
// ends the subscription (a no-op over a state that notifies nothing).
func (r *Runtime) watchMutations() (stop func()) {
	n, ok := r.st.(state.MutationNotifier)
	if !ok {
		return func() {}
	}
	return n.NotifyMutations(r.mutationFound)
}

// mutationFound logs the change err of the snapshot of ptr at version v,
// found by the state's guard, naming its holders.
func (r *Runtime) mutationFound(ptr resource.Pointer, v resource.Version, err error) {
	holders := r.holdersOf(ptr, v)
	r.logger.Error("a shared read-only snapshot was changed in place by "+holdersText(holders)+
		"; change a copy instead (DeepCopy, or Modify)",
		zap.String("resource", resource.PointerString(ptr)), zap.Stringer("version", v),
		zap.Strings("holders", holders), zap.String("error", err.Error()))
}

// holdersOf names the controllers that held version v of ptr: those the
// trace shows it was routed to, or, when the trace does not tell (it is
// off, or moved on), those that declare an input covering ptr.
func (r *Runtime) holdersOf(ptr resource.Pointer, v resource.Version) []string {
	var out []string
	if ring := r.tel.Ring; ring != nil {
		ref := trace.Ref{Namespace: ptr.Namespace(), Type: ptr.Type(), ID: ptr.ID()}
		for _, e := range ring.Snapshot() {
			if e.Type == trace.Route && e.Resource.SameResource(ref) && e.Resource.Version == v.Value() && !slices.Contains(out, e.Controller) {
				out = append(out, e.Controller)
			}
		}
	}
	if len(out) == 0 {
		if g, err := r.GetDependencyGraph(); err == nil {
			for _, e := range g.Edges {
				if readsPointer(e, ptr) && !slices.Contains(out, e.ControllerName) {
					out = append(out, e.ControllerName)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// readsPointer reports whether e is an input edge that covers ptr.
func readsPointer(e controller.DependencyEdge, ptr resource.Pointer) bool {
	if e.EdgeType == controller.EdgeOutputExclusive || e.EdgeType == controller.EdgeOutputShared {
		return false
	}
	return e.ResourceNamespace == ptr.Namespace() && e.ResourceType == ptr.Type() && (e.ResourceID == "" || e.ResourceID == ptr.ID())
}

// holdersText names holders in a sentence.
func holdersText(holders []string) string {
	switch len(holders) {
	case 0:
		return "a reader outside the Runtime"
	case 1:
		return "controller " + holders[0]
	}
	return "one of the controllers " + strings.Join(holders, ", ")
}
