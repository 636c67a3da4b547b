package inmem

import (
	"unsafe"

	"github.com/resgraph/resgraph/pkg/resource"
)

// key returns the comparable pointer ptr names, or the error of
// [resource.ValidatePointer] (invalid class) when ptr is nil or its
// namespace, type or ID is empty (rule R3). A PointerKey (what
// [resource.NewPointer] returns) with all three set is the key itself
// (see keyOf), without the type switches of ValidatePointer and
// PointerOf.
func key(ptr resource.Pointer) (resource.PointerKey, error) {
	if p, ok := ptr.(resource.PointerKey); ok {
		if ns, typ, id := p.Identity(); ns != "" && typ != "" && id != "" {
			return p, nil
		}
	}
	if err := resource.ValidatePointer(ptr); err != nil {
		return resource.PointerKey{}, err
	}
	return resource.PointerOf(ptr), nil
}

// keyOf returns the namespace, type and ID of ptr, and true, when it is a
// PointerKey with all three set; false otherwise (see key). It is
// inlined, and reads the key in place, where its box is (a type
// assertion would copy its 48 bytes out first): a Get checks it before
// calling key.
func keyOf(ptr resource.Pointer) (resource.Namespace, resource.Type, resource.ID, bool) {
	w := (*ifaceWords)(unsafe.Pointer(&ptr))
	if w.tab != pointerKeyTab {
		return "", "", "", false
	}
	ns, typ, id := (*resource.PointerKey)(w.data).Identity()
	return ns, typ, id, ns != "" && typ != "" && id != ""
}

// pointerKeyTab is the type word of a resource.Pointer holding a
// resource.PointerKey.
var pointerKeyTab = func() unsafe.Pointer {
	var p resource.Pointer = resource.PointerKey{}
	return wordsOfPointer(p).tab
}()

// wordsOfPointer returns the two words of p.
func wordsOfPointer(p resource.Pointer) ifaceWords {
	return *(*ifaceWords)(unsafe.Pointer(&p))
}
