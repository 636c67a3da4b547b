package typed

import (
	"unsafe"

	"github.com/resgraph/resgraph/pkg/internal/plaincopy"
	"github.com/resgraph/resgraph/pkg/resource"
)

func init() { plaincopy.Register(storedCopyOf, plainCopyOf, storedFuncOf) }

// plainCopier is a *Resource[S, D] (or a type embedding one, which must
// not be taken for it: see storedCopy).
type plainCopier interface {
	storedCopy(self resource.Resource, owned bool) (resource.Resource, *resource.Metadata, int, bool)
	plainCopy(self resource.Resource) (resource.Resource, bool)
	storedFunc(self resource.Resource) (plaincopy.Func, bool)
}

// storedCopyOf implements [plaincopy.Of] for typed resources.
func storedCopyOf(r resource.Resource, owned bool) (resource.Resource, *resource.Metadata, int, bool) {
	if pc, ok := r.(plainCopier); ok {
		return pc.storedCopy(r, owned)
	}
	return nil, nil, 0, false
}

// storedFuncOf implements [plaincopy.ForType] for typed resources.
func storedFuncOf(r resource.Resource) (plaincopy.Func, bool) {
	if pc, ok := r.(plainCopier); ok {
		return pc.storedFunc(r)
	}
	return nil, false
}

// plainCopyOf implements [plaincopy.Copy] for typed resources.
func plainCopyOf(r resource.Resource) (resource.Resource, bool) {
	if pc, ok := r.(plainCopier); ok {
		return pc.plainCopy(r)
	}
	return nil, false
}

// plainCopy is [plaincopy.Copy] of self, a value holding r: when
// r.CopiesWithoutUserCode(self), r's DeepCopy and true; otherwise false.
// S's plan is looked up once.
func (r *Resource[S, D]) plainCopy(self resource.Resource) (resource.Resource, bool) {
	if p, ok := self.(*Resource[S, D]); !ok || p != r {
		return nil, false
	}
	p := cachedPlan[S]()
	if p == nil {
		p = planOf[S]()
	}
	if !p.userFree {
		return nil, false
	}
	c := &Resource[S, D]{}
	r.md.CopyInto(&c.md)
	p.copy(&c.spec, &r.spec)
	return c, true
}

// storedCopy is [plaincopy.Of] of self, a value holding r: when
// r.CopiesWithoutUserCode(self) (self is r itself and S's copy runs no
// user code), r's DeepCopy (r itself when owned), its metadata, its
// ApproxSize and true; otherwise false. S's plan is looked up once.
func (r *Resource[S, D]) storedCopy(self resource.Resource, owned bool) (resource.Resource, *resource.Metadata, int, bool) {
	if p, ok := self.(*Resource[S, D]); !ok || p != r {
		return nil, nil, 0, false
	}
	p := cachedPlan[S]()
	if p == nil {
		p = planOf[S]()
	}
	if !p.userFree {
		return nil, nil, 0, false
	}
	c := r
	if !owned {
		c = &Resource[S, D]{}
		r.md.CopyInto(&c.md)
		p.copy(&c.spec, &r.spec)
	}
	return c, &c.md, c.approxSize(p), true
}

// storedFunc is [plaincopy.ForType] of self, a value holding r: when
// storedCopy reports true for self, the storedCopy of every
// *Resource[S, D], with S's plan found here once; for a resource of any
// other type (a type embedding *Resource[S, D] included), and for a nil
// *Resource[S, D], the function reports false.
func (r *Resource[S, D]) storedFunc(self resource.Resource) (plaincopy.Func, bool) {
	if p, ok := self.(*Resource[S, D]); !ok || p != r {
		return nil, false
	}
	p := planOf[S]()
	if !p.userFree {
		return nil, false
	}
	fixed := p.fixedSize // the size is the resource's and its metadata's
	return func(x resource.Resource, owned bool) (resource.Resource, *resource.Metadata, int, bool) {
		src, ok := x.(*Resource[S, D])
		if !ok || src == nil {
			return nil, nil, 0, false
		}
		c := src
		if !owned {
			c = &Resource[S, D]{}
			src.md.CopyInto(&c.md)
			p.copy(&c.spec, &src.spec)
		}
		if fixed { // approxSize, without its call
			return c, &c.md, int(unsafe.Sizeof(*c)) + c.md.ApproxSize(), true
		}
		return c, &c.md, c.approxSize(p), true
	}, true
}
