package state

import (
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// ValidateResource returns the metadata of r, or the invalid-class error of
// a resource a state cannot store: nil (or an interface holding a nil
// pointer), without metadata, with an unusable identity (see
// [resource.ValidatePointer], whose error it returns as it is) or in an
// unknown phase. A State, and any layer that refuses bad input before it
// reaches a State, validates its arguments with it and with
// [resource.ValidatePointer] and [resource.ValidateKind], so that bad input
// gets the same error everywhere. It calls r's Metadata method: a
// resource is user code, so the caller recovers a panic as it would for
// any other method of r.
func ValidateResource(r resource.Resource) (*resource.Metadata, error) {
	if usercode.IsNil(r) {
		return nil, NewInvalidError(nil, "nil resource")
	}
	md := r.Metadata()
	if md == nil {
		return nil, NewInvalidError(nil, "resource %T with nil metadata", r)
	}
	if ns, typ, id := md.Identity(); ns == "" || typ == "" || id == "" {
		return nil, resource.ValidatePointer(md) // says what is empty
	}
	if _, p, _ := md.Head(); p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return nil, NewInvalidError(resource.PointerOf(md), "unknown phase %s", p)
	}
	return md, nil
}
