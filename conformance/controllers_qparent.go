package conformance

import (
	"context"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
)

// ParentLabel is the label by which a mapped StrResource names its parent
// for [QParentController].
const ParentLabel = "parent"

// QParentController is a QController whose mapped input StrResources (in
// MappedNamespace) name their parent IntResource (in Namespace) by the
// label [ParentLabel] (rule Q4): MapInput maps a StrResource to its
// parent, reading the label from the resource as stored, or, for one that
// was destroyed, from the last metadata the Runtime hands it
// ([controller.DestroyedInput]). It records every MapInput call
// ([MapCall]) and counts Reconcile calls per ID; Reconcile does nothing
// else.
//
// Inputs: IntResources in Namespace (primary), StrResources in
// MappedNamespace (mapped). Outputs: none.
type QParentController struct {
	// ControllerName is the controller's name (default
	// "QParentController").
	ControllerName string
	// Namespace holds the parent IntResources (default
	// [DefaultNamespace]).
	Namespace resource.Namespace
	// MappedNamespace holds the mapped StrResources (default
	// [MappedNamespace]).
	MappedNamespace resource.Namespace
	// MapGate, when set, is received from at the start of every MapInput
	// call: the call stays in flight until something is sent on it (or
	// its context ends, which fails the call).
	MapGate <-chan struct{}

	mu         sync.Mutex
	calls      []MapCall               // guarded by mu
	reconciles callCounts[resource.ID] // Reconcile calls per ID
}

// MapCall is one MapInput call of a [QParentController].
type MapCall struct {
	// ID is the mapped StrResource's ID.
	ID resource.ID
	// Destroyed tells that MapInput received a controller.DestroyedInput.
	Destroyed bool
	// Parent is the value of the ParentLabel label MapInput saw ("" when
	// absent), Annotations the annotations.
	Parent      string
	Annotations map[string]string
	// Version, Phase, Owner and Finalizers are those of the metadata
	// MapInput saw (for a destroyed input: of its last stored version).
	Version    uint64
	Phase      resource.Phase
	Owner      string
	Finalizers []resource.Finalizer
	// Spec is the StrResource's value MapInput saw.
	Spec string
	// HasPrevious tells that MapInput received the input's previous
	// version (controller.PreviousOf: rule Q4, extended); Previous is
	// that version's ParentLabel.
	HasPrevious bool
	Previous    string
}

// Name implements controller.QController.
func (c *QParentController) Name() string { return orDefault(c.ControllerName, "QParentController") }

func (c *QParentController) ns() resource.Namespace { return orDefault(c.Namespace, DefaultNamespace) }

// Settings implements controller.QController.
func (c *QParentController) Settings() controller.QSettings {
	return controller.QSettings{
		Inputs: []controller.Input{
			{Namespace: c.ns(), Type: IntResourceType, Kind: controller.InputQPrimary},
			{Namespace: orDefault(c.MappedNamespace, MappedNamespace), Type: StrResourceType, Kind: controller.InputQMapped},
		},
	}
}

// Reconcile counts the call.
func (c *QParentController) Reconcile(_ context.Context, _ *zap.Logger, _ controller.QRuntime, ptr resource.Pointer) error {
	c.reconciles.add(ptr.ID())
	return nil
}

// MapInput maps a StrResource to the parent its label names: from the
// resource as stored, or from the last version of a destroyed one; and,
// when the Runtime hands the input's previous version (rule Q4, extended),
// to the parent that version's label names too.
func (c *QParentController) MapInput(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	if c.MapGate != nil {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.MapGate:
		}
	}
	call := MapCall{ID: ptr.ID()}
	var out []resource.Pointer
	if prev, ok := controller.PreviousOf(ptr); ok {
		call.HasPrevious = true
		call.Previous, _ = prev.Metadata().Labels().Get(ParentLabel)
		out = c.parent(out, call.Previous)
	}
	var res resource.Resource
	if gone, ok := controller.AsDestroyed(ptr); ok {
		call.Destroyed = true
		res = gone.Last()
	} else {
		var err error
		if res, err = r.Get(ctx, ptr, state.WithReadOnlyGet()); err != nil {
			if state.IsNotFoundError(err) {
				c.record(call) // gone: its destruction's own call maps it
				return out, nil
			}
			return nil, err
		}
	}
	md := res.Metadata()
	call.Parent, _ = md.Labels().Get(ParentLabel)
	call.Annotations = md.Annotations().Raw()
	call.Version, call.Phase, call.Owner = md.Version().Value(), md.Phase(), md.Owner()
	call.Finalizers = slices.Clone(*md.Finalizers())
	if s, ok := res.(*StrResource); ok {
		call.Spec = s.TypedSpec().Value
	}
	c.record(call)
	if call.Parent == call.Previous && call.HasPrevious {
		return out, nil
	}
	return c.parent(out, call.Parent), nil
}

// parent appends the pointer to the parent id, if any, to out.
func (c *QParentController) parent(out []resource.Pointer, id resource.ID) []resource.Pointer {
	if id == "" {
		return out
	}
	return append(out, resource.NewPointer(c.ns(), IntResourceType, id))
}

func (c *QParentController) record(call MapCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

// MapCalls returns the MapInput calls for the mapped StrResource id, in
// order.
func (c *QParentController) MapCalls(id resource.ID) []MapCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []MapCall
	for _, call := range c.calls {
		if call.ID == id {
			out = append(out, call)
		}
	}
	return out
}

// Reconciles returns how many times Reconcile was called for id.
func (c *QParentController) Reconciles(id resource.ID) int { return c.reconciles.get(id) }

var _ controller.QController = (*QParentController)(nil)
