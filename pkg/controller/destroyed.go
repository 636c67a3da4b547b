package controller

import "github.com/resgraph/resgraph/pkg/resource"

// DestroyedInput is the pointer a QController's MapInput receives for a
// mapped input (InputQMapped, InputQMappedDestroyReady) that was destroyed
// (rule Q4). It carries the input's last stored version — its metadata
// (labels, annotations, owner, phase, finalizers, and the version of that
// last stored version) and, as the state reported it, its spec — however
// the Runtime learnt of the destruction: a live watch event, a burst of
// changes coalesced into one destroy, a destroy found by a re-list after a
// watch was re-established, on any backend. MapInput tells it apart with
// [AsDestroyed] (or a type switch on *DestroyedInput); a MapInput that
// only needs the identity uses it as the resource.Pointer it is:
//
//	func (c *C) MapInput(ctx context.Context, _ *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
//		if gone, ok := controller.AsDestroyed(ptr); ok {
//			parent, _ := gone.Metadata().Labels().Get("parent")
//			return parentsOf(parent), nil
//		}
//		res, err := r.Get(ctx, ptr, state.WithReadOnlyGet())
//		...
//	}
//
// A destroyed input that was created again before MapInput ran is not
// destroyed any more: MapInput then receives a plain pointer and reads the
// new resource. The last version is a shared, read-only snapshot (rule S7):
// never change it, DeepCopy it first.
type DestroyedInput struct {
	last resource.Resource
	md   *resource.Metadata
	// prev is the version before the first metadata change not yet
	// mapped, if any (see [ChangedInput], [PreviousOf]).
	prev resource.Resource
}

// NewDestroyedInput returns the pointer that stands for a destroyed input
// whose last stored version is last (Runtimes build it for MapInput; tests
// of a MapInput build it to call it as the Runtime would). It panics on a
// nil last or a last without metadata.
func NewDestroyedInput(last resource.Resource) *DestroyedInput {
	if last == nil {
		panic("controller.NewDestroyedInput: nil resource")
	}
	md := last.Metadata()
	if md == nil {
		panic("controller.NewDestroyedInput: resource without metadata")
	}
	return &DestroyedInput{last: last, md: md}
}

// WithPrevious returns a copy of d that also carries prev, the input's
// version before the first metadata change not yet mapped (rule Q4,
// extended: a relabel then a destroy requeues what the input left as well
// as what its last version names); see [PreviousOf]. A nil prev carries
// none.
func (d *DestroyedInput) WithPrevious(prev resource.Resource) *DestroyedInput {
	c := *d
	c.prev = prev
	return &c
}

// Previous returns the version before the first metadata change not yet
// mapped, nil when the last version is the one MapInput saw last.
func (d *DestroyedInput) Previous() resource.Resource { return d.prev }

// AsDestroyed reports whether ptr, as MapInput received it, stands for a
// destroyed input, and returns it then.
func AsDestroyed(ptr resource.Pointer) (*DestroyedInput, bool) {
	d, ok := ptr.(*DestroyedInput)
	return d, ok && d != nil
}

// Namespace returns the destroyed input's namespace.
func (d *DestroyedInput) Namespace() resource.Namespace { return d.md.Namespace() }

// Type returns the destroyed input's type.
func (d *DestroyedInput) Type() resource.Type { return d.md.Type() }

// ID returns the destroyed input's ID.
func (d *DestroyedInput) ID() resource.ID { return d.md.ID() }

// Metadata returns the metadata of the input's last stored version
// (read-only).
func (d *DestroyedInput) Metadata() *resource.Metadata { return d.md }

// Last returns the input's last stored version (read-only), as the state
// reported it when it was destroyed.
func (d *DestroyedInput) Last() resource.Resource { return d.last }

// String formats the pointer as "destroyed T(ns/id)".
func (d *DestroyedInput) String() string { return "destroyed " + resource.PointerString(d.md) }
