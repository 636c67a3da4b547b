package conformance

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// The hostile inputs of the suites' TestHostile_* tests: resources whose
// methods misbehave, errors whose methods panic, typed nils. They stand for
// buggy user code, which a State or a Runtime must survive: refuse with an
// invalid-class error where the input is an argument it can check, and
// otherwise fail only the call (or the controller or item) that ran it,
// never another goroutine, never leaving a lock held.

// hostileMode is how a hostileResource misbehaves.
type hostileMode int

const (
	// metadataNil: Metadata returns nil.
	metadataNil hostileMode = iota + 1
	// metadataPanics: Metadata panics.
	metadataPanics
	// deepCopyPanics: DeepCopy panics (as typed.Resource's does for a spec
	// it cannot copy).
	deepCopyPanics
	// deepCopyNil: DeepCopy returns nil.
	deepCopyNil
	// deepCopyTypedNil: DeepCopy returns a nil *hostileResource.
	deepCopyTypedNil
	// deepCopyOtherIdentity: DeepCopy returns a resource with another ID.
	deepCopyOtherIdentity
)

// String names the mode in failure messages.
func (m hostileMode) String() string {
	return map[hostileMode]string{
		metadataNil: "Metadata returns nil", metadataPanics: "Metadata panics",
		deepCopyPanics: "DeepCopy panics", deepCopyNil: "DeepCopy returns nil",
		deepCopyTypedNil: "DeepCopy returns a typed nil", deepCopyOtherIdentity: "DeepCopy changes the identity",
	}[m]
}

// hostileResource is a resource of the IntResource type whose methods
// misbehave as its mode says.
type hostileResource struct {
	md   resource.Metadata
	mode hostileMode
}

func newHostile(ns resource.Namespace, id resource.ID, mode hostileMode) *hostileResource {
	return &hostileResource{md: resource.NewMetadata(ns, IntResourceType, id, resource.VersionUndefined), mode: mode}
}

func (r *hostileResource) Metadata() *resource.Metadata {
	switch r.mode {
	case metadataNil:
		return nil
	case metadataPanics:
		panic("hostile Metadata")
	}
	return &r.md
}

func (r *hostileResource) Spec() any { return IntSpec{} }

func (r *hostileResource) DeepCopy() resource.Resource {
	switch r.mode {
	case deepCopyPanics:
		panic("hostile DeepCopy")
	case deepCopyNil:
		return nil
	case deepCopyTypedNil:
		return (*hostileResource)(nil)
	case deepCopyOtherIdentity:
		return &hostileResource{md: resource.NewMetadata(r.md.Namespace(), r.md.Type(), r.md.ID()+"-other", r.md.Version())}
	}
	return &hostileResource{md: r.md.Copy(), mode: r.mode}
}

// panickyEqualSpec is a spec whose Equal method (rule R1: it decides spec
// equality) panics.
type panickyEqualSpec struct{ Value int }

// Equal panics.
func (panickyEqualSpec) Equal(any) bool { panic("hostile Equal") }

// hostileError is an error whose Error method panics.
type hostileError struct{}

func (hostileError) Error() string { panic("hostile Error") }

// nilError is a user error type; a nil *nilError returned as an error is a
// typed nil.
type nilError struct{}

func (*nilError) Error() string { return "nil error" }
