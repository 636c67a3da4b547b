package inmem

import (
	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// identity returns the namespace, type and ID ptr names, or the error of
// [resource.ValidatePointer] (invalid class) when ptr is nil or one of them
// is empty (rule R3).
func identity(ptr resource.Pointer) (ns resource.Namespace, typ resource.Type, id resource.ID, err error) {
	switch p := ptr.(type) {
	case *resource.Metadata:
		if p != nil {
			ns, typ, id = p.Identity()
		}
	case resource.PointerKey:
		ns, typ, id = p.Namespace(), p.Type(), p.ID()
	default:
		if !usercode.IsNil(p) {
			ns, typ, id = p.Namespace(), p.Type(), p.ID()
		}
	}
	if ns == "" || typ == "" || id == "" {
		return "", "", "", resource.ValidatePointer(ptr)
	}
	return ns, typ, id, nil
}
