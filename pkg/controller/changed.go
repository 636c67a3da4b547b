package controller

import "github.com/resgraph/resgraph/pkg/resource"

// ChangedInput is the pointer a QController's MapInput receives for a
// mapped input (InputQMapped) whose metadata changed since its last
// MapInput (rule Q4, extended): a relabelled input, one whose owner,
// annotations, phase or finalizers changed, or one destroyed and created
// again before MapInput ran. It carries the input's previous version —
// the one before the first such change not yet mapped — so that MapInput
// requeues what the input left as well as what it joined:
//
//	func (c *C) MapInput(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
//		var out []resource.Pointer
//		if prev, ok := controller.PreviousOf(ptr); ok {
//			out = append(out, parentOf(prev.Metadata())...) // the parent it left
//		}
//		... // read ptr and map it as it is now
//	}
//
// A change of the spec alone (or of the version) passes a plain pointer:
// the metadata MapInput saw last is the current one. A MapInput that only
// reads the current resource uses a ChangedInput as the resource.Pointer
// it is. The previous version is a shared, read-only snapshot (rule S7).
//
// What "previous" covers: the version the Runtime saw before the first
// metadata change routed since the input's last MapInput. The versions in
// between of a burst coalesced into one MapInput (by the queue, or by the
// state's watch, rule S12) are not handed over: a mapper that must see
// every value a label ever had keeps its own record.
type ChangedInput struct {
	ptr  resource.PointerKey
	prev resource.Resource
}

// NewChangedInput returns the pointer that stands for the mapped input ptr
// whose previous version is prev (Runtimes build it for MapInput; tests of
// a MapInput build it to call it as a Runtime would). It panics on a nil
// prev or a prev without metadata.
func NewChangedInput(ptr resource.Pointer, prev resource.Resource) *ChangedInput {
	if prev == nil || prev.Metadata() == nil {
		panic("controller.NewChangedInput: nil previous version or one without metadata")
	}
	return &ChangedInput{ptr: resource.PointerOf(ptr), prev: prev}
}

// AsChanged reports whether ptr, as MapInput received it, stands for a
// mapped input whose metadata changed, and returns it then.
func AsChanged(ptr resource.Pointer) (*ChangedInput, bool) {
	c, ok := ptr.(*ChangedInput)
	return c, ok && c != nil
}

// PreviousOf returns the previous version that ptr, as MapInput received
// it, carries: a [*ChangedInput]'s, or a [*DestroyedInput]'s when the
// input's metadata changed before it was destroyed. ok is false for a
// plain pointer.
func PreviousOf(ptr resource.Pointer) (prev resource.Resource, ok bool) {
	if c, isChanged := AsChanged(ptr); isChanged {
		return c.prev, true
	}
	if d, isGone := AsDestroyed(ptr); isGone && d.prev != nil {
		return d.prev, true
	}
	return nil, false
}

// Namespace returns the input's namespace.
func (c *ChangedInput) Namespace() resource.Namespace { return c.ptr.Namespace() }

// Type returns the input's type.
func (c *ChangedInput) Type() resource.Type { return c.ptr.Type() }

// ID returns the input's ID.
func (c *ChangedInput) ID() resource.ID { return c.ptr.ID() }

// Previous returns the input's previous version (read-only).
func (c *ChangedInput) Previous() resource.Resource { return c.prev }

// String formats the pointer as "changed T(ns/id)".
func (c *ChangedInput) String() string { return "changed " + c.ptr.String() }

// MetadataChanged reports whether the metadata that mappers read —
// labels, annotations, owner, phase, finalizers — differ between old and
// cur (versions and times aside): the changes for which MapInput gets a
// [*ChangedInput].
func MetadataChanged(old, cur *resource.Metadata) bool {
	return old.Phase() != cur.Phase() || old.Owner() != cur.Owner() ||
		!old.Labels().Equal(*cur.Labels()) || !old.Annotations().Equal(*cur.Annotations()) ||
		!sameFinalizers(*old.Finalizers(), *cur.Finalizers()) ||
		!old.Created().Equal(cur.Created())
}

func sameFinalizers(a, b resource.Finalizers) bool {
	if len(a) != len(b) {
		return false
	}
	for _, f := range a {
		if !b.Has(f) {
			return false
		}
	}
	return true
}
