package resource

import "github.com/resgraph/resgraph/pkg/resource/internal/speceq"

// Resource is a resource: metadata plus an opaque spec.
type Resource interface {
	// Metadata returns the resource's metadata, mutable and owned by this
	// resource value.
	Metadata() *Metadata
	// Spec returns the spec, opaque to the runtime.
	Spec() any
	// DeepCopy returns a fully independent copy (rule R2).
	DeepCopy() Resource
}

// List is a list of resources, as returned by a state's List.
type List struct {
	Items []Resource
}

// CopyChecker is implemented by resources whose DeepCopy can fail (typed
// resources whose spec holds a func, a channel, an unsafe.Pointer or a
// synchronization primitive): CopyError returns why DeepCopy would panic,
// nil when it would not. A state calls it before storing a resource and
// refuses one that cannot be copied with an error of the invalid class
// (rule S7: a write stores a deep copy).
type CopyChecker interface {
	CopyError() error
}

// SpecEqualer is implemented by resources that compare their specs without
// boxing them into an interface (typed resources do). [Equal] uses it when
// both sides implement it.
type SpecEqualer interface {
	SpecEqual(other Resource) (equal, ok bool)
}

// Equal reports whether a and b have equal metadata (see [Metadata.Equal])
// and equal specs (rule R1): a spec with an Equal(any) bool method decides
// itself, any other spec is compared deeply, as reflect.DeepEqual does
// except that a nil and an empty slice are equal, a nil and an empty map
// too (at any depth), and time.Time values compare by instant
// (time.Time.Equal). Two nil resources are equal; a nil and a non-nil one
// are not.
func Equal(a, b Resource) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if !a.Metadata().Equal(*b.Metadata()) {
		return false
	}
	if se, ok := a.(SpecEqualer); ok {
		if eq, ok := se.SpecEqual(b); ok {
			return eq
		}
	}
	return SpecEqual(a.Spec(), b.Spec())
}

// SpecEqual compares two specs as [Equal] does.
func SpecEqual(a, b any) bool {
	if e, ok := a.(interface{ Equal(any) bool }); ok {
		return e.Equal(b)
	}
	return speceq.Equal(a, b)
}

// String formats a resource as "type(namespace/id)".
func String(r Resource) string {
	if r == nil {
		return "<nil resource>"
	}
	return PointerString(r.Metadata())
}
