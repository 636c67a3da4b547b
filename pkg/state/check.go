package state

import (
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// CheckPointer reports whether ptr names a resource (rule R3): nil when it
// does, otherwise an invalid-class error ([IsInvalidError]) saying what is
// wrong — a nil pointer (or an interface holding one), an empty namespace,
// type or ID (the error wraps [resource.ErrEmptyIdentity]). A State, and any
// layer that refuses bad input before it reaches a State, checks its
// arguments with it, so that bad input gets the same error everywhere.
func CheckPointer(ptr resource.Pointer) error {
	if err := resource.ValidatePointer(ptr); err != nil {
		return NewInvalidError(nil, "%w", err)
	}
	return nil
}

// CheckKind is [CheckPointer] for a kind: a nil kind, an empty namespace or
// type is an invalid-class error.
func CheckKind(k resource.Kind) error {
	if err := resource.ValidateKind(k); err != nil {
		return NewInvalidError(nil, "%w", err)
	}
	return nil
}

// CheckResource returns the metadata of r, or the invalid-class error of a
// resource a state cannot store: nil (or an interface holding a nil
// pointer), without metadata, with an unusable identity (see
// [CheckPointer]) or in an unknown phase. It calls r's Metadata method: a
// resource is user code, so the caller recovers a panic as it would for
// any other method of r.
func CheckResource(r resource.Resource) (*resource.Metadata, error) {
	if usercode.IsNil(r) {
		return nil, NewInvalidError(nil, "nil resource")
	}
	md := r.Metadata()
	if md == nil {
		return nil, NewInvalidError(nil, "resource %T with nil metadata", r)
	}
	if err := CheckPointer(md); err != nil {
		return nil, err
	}
	if p := md.Phase(); p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return nil, NewInvalidError(resource.PointerOf(md), "unknown phase %s", p)
	}
	return md, nil
}
