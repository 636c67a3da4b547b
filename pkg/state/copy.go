package state

import (
	"github.com/resgraph/resgraph/pkg/internal/plaincopy"
	"github.com/resgraph/resgraph/pkg/resource"
)

// DeepCopyOf returns r.DeepCopy(), or an error of the invalid class naming
// the resource when r cannot be copied: its DeepCopy panics (a resource's
// DeepCopy is user code, and a state never crashes on it), or returns nil.
// The error wraps the reason: for a [resource.CopyChecker], its CopyError
// (why DeepCopy panics, such as a typed.CopyError); otherwise a panic
// value that is an error.
//
// CopyError is asked only once DeepCopy panicked: a CopyChecker's
// DeepCopy panics exactly when CopyError is not nil (its contract), so
// that a copy that succeeds costs no call to it. The pointer named in
// errors is built only on failure too: boxing it costs an allocation.
//
// A typed resource whose copy runs no user code (a plain-value spec, see
// usercode.CopiesPlainly) is copied without the deferred recover, its
// type's copy plan found once. A resource of any other type is copied
// under the recover, whatever its CopiesWithoutUserCode says.
func DeepCopyOf(r resource.Resource) (c resource.Resource, err error) {
	if c, ok := plaincopy.Copy(r); ok {
		return c, nil
	}
	return deepCopyOfUser(r)
}

// deepCopyOfUser is DeepCopyOf of a resource whose DeepCopy is user code.
func deepCopyOfUser(r resource.Resource) (c resource.Resource, err error) {
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, copyFailed(r, p)
		}
	}()
	// A typed-nil copy panics in Metadata, which the recover turns into
	// an error.
	if c = r.DeepCopy(); c == nil || c.Metadata() == nil {
		return nil, NewInvalidError(resource.PointerOf(r.Metadata()), "DeepCopy of %T returned no resource", r)
	}
	return c, nil
}

// intoCopier is a resource that can copy itself into the storage of
// another resource of its type (typed.Resource's CopyInto).
type intoCopier interface {
	// CopyInto makes dst a deep copy of the resource and reports true;
	// false, changing nothing, when it cannot (dst of another type, or a
	// shared snapshot).
	CopyInto(dst resource.Resource) bool
}

// deepCopyInto is [DeepCopyOf] of r made in the storage of into, a
// resource its caller gave up, when into is not nil and r can copy itself
// there (intoCopier): the copy is then into itself, and nothing is
// allocated. Otherwise it is DeepCopyOf(r).
func deepCopyInto(r, into resource.Resource) (c resource.Resource, err error) {
	ic, ok := r.(intoCopier)
	if into == nil || !ok {
		return DeepCopyOf(r)
	}
	defer func() {
		if p := recover(); p != nil {
			c, err = nil, copyFailed(r, p)
		}
	}()
	if !ic.CopyInto(into) {
		return DeepCopyOf(r)
	}
	return into, nil
}

// copyFailed is the error of a DeepCopy of r that panicked with p: r's
// CopyError when r is a CopyChecker that has one, else the panic.
func copyFailed(r resource.Resource, p any) error {
	ptr := resource.PointerOf(r.Metadata())
	if cc, ok := r.(resource.CopyChecker); ok {
		if err := cc.CopyError(); err != nil {
			return NewInvalidError(ptr, "%w", err)
		}
	}
	if perr, ok := p.(error); ok {
		return NewInvalidError(ptr, "DeepCopy of %T panicked: %w", r, perr)
	}
	return NewInvalidError(ptr, "DeepCopy of %T panicked: %v", r, p)
}

// ListOf returns items as a List: the items themselves when readOnly
// (shared snapshots, rule S7), else each replaced by its copy
// ([DeepCopyOf]), or the error of the first that cannot be copied.
func ListOf(items []resource.Resource, readOnly bool) (resource.List, error) {
	if !readOnly {
		for i, r := range items {
			cp, err := DeepCopyOf(r)
			if err != nil {
				return resource.List{}, err
			}
			items[i] = cp
		}
	}
	return resource.List{Items: items}, nil
}
