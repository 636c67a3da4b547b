package state

import "github.com/resgraph/resgraph/pkg/resource"

// DeepCopyOf returns r.DeepCopy(), or an error of the invalid class naming
// the resource when r cannot be copied: its [resource.CopyChecker] says
// so, its DeepCopy panics (a resource's DeepCopy is user code, and a
// state never crashes on it), or returns nil. The error wraps the reason
// (a panic value that is an error, such as a typed.CopyError).
//
// The pointer named in errors is built only on failure: boxing it costs
// an allocation, which a successful copy never pays.
func DeepCopyOf(r resource.Resource) (c resource.Resource, err error) {
	if cc, ok := r.(resource.CopyChecker); ok {
		if err := cc.CopyError(); err != nil {
			return nil, NewInvalidError(resource.PointerOf(r.Metadata()), "%w", err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			c = nil
			ptr := resource.PointerOf(r.Metadata())
			if perr, ok := p.(error); ok {
				err = NewInvalidError(ptr, "DeepCopy of %T panicked: %w", r, perr)
			} else {
				err = NewInvalidError(ptr, "DeepCopy of %T panicked: %v", r, p)
			}
		}
	}()
	// A typed-nil copy panics in Metadata, which the recover turns into
	// an error.
	if c = r.DeepCopy(); c == nil || c.Metadata() == nil {
		return nil, NewInvalidError(resource.PointerOf(r.Metadata()), "DeepCopy of %T returned no resource", r)
	}
	return c, nil
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
