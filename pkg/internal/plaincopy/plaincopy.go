// Package plaincopy lets a state store or copy a resource that copies
// itself without user code (usercode.CopiesPlainly) in one call: [Of]
// gives the copy to store (or the resource itself when the state owns
// it), its metadata and its ApproxSize, and [Copy] the copy alone, each of
// which would otherwise ask the resource's type for its copy plan again.
//
// A state that writes many resources of one type asks once for that
// type's own Of ([ForType]) and calls it on every write: it finds neither
// the resource's type nor its copy plan again.
//
// Package typed registers the only implementations, for its resources,
// when it is initialized; a program that never imports it stores no typed
// resource, and Of, Copy and ForType report false for every resource.
package plaincopy

import "github.com/resgraph/resgraph/pkg/resource"

// Func is the form of the registered implementation: see [Of].
type Func func(r resource.Resource, owned bool) (stored resource.Resource, md *resource.Metadata, size int, ok bool)

// CopyFunc is the form of the registered implementation of [Copy].
type CopyFunc func(r resource.Resource) (c resource.Resource, ok bool)

// ForTypeFunc is the form of the registered implementation of [ForType].
type ForTypeFunc func(r resource.Resource) (of Func, ok bool)

// of, copyOf and forType are the registered implementations, none,
// copyNone and forTypeNone until Register; written only by Register, from
// a package's init, before any call of Of, Copy or ForType. They are
// never nil, so that Of, Copy and ForType are inlined as a call of them.
var (
	of      Func        = none
	copyOf  CopyFunc    = copyNone
	forType ForTypeFunc = forTypeNone
)

// none is the implementation of Of until one is registered: ok false for
// every resource.
func none(resource.Resource, bool) (resource.Resource, *resource.Metadata, int, bool) {
	return nil, nil, 0, false
}

// copyNone is the implementation of Copy until one is registered: ok
// false for every resource.
func copyNone(resource.Resource) (resource.Resource, bool) { return nil, false }

// forTypeNone is the implementation of ForType until one is registered:
// false for every resource.
func forTypeNone(resource.Resource) (Func, bool) { return nil, false }

// Register makes f the implementation of [Of], c that of [Copy] and t
// that of [ForType] (none again for nil). It is called once, from the
// init of package typed: a later call would race with Of, Copy and
// ForType.
func Register(f Func, c CopyFunc, t ForTypeFunc) {
	if f == nil {
		f = none
	}
	if c == nil {
		c = copyNone
	}
	if t == nil {
		t = forTypeNone
	}
	of, copyOf, forType = f, c, t
}

// Of returns, when r is a typed resource whose DeepCopy, CopyInto and
// ApproxSize run no user code (for a typed resource, exactly when
// usercode.CopiesPlainly(r) is true), the version of r to store:
// r.DeepCopy() (of r's identity), or r itself when owned; its metadata
// (stored.Metadata()); its ApproxSize; and ok. For any other r (a
// resource of another package's type too, whatever its
// CopiesWithoutUserCode says) it returns ok false and nothing else,
// having called none of r's methods: the caller then copies r as user
// code.
func Of(r resource.Resource, owned bool) (stored resource.Resource, md *resource.Metadata, size int, ok bool) {
	return of(r, owned)
}

// Copy returns r.DeepCopy() and ok when r is a typed resource whose
// DeepCopy runs no user code (exactly when usercode.CopiesPlainly(r) is
// true, as for [Of]), having found its type's copy plan once. For any
// other r it returns nil and false, having called none of r's methods:
// the caller then copies r as user code.
func Copy(r resource.Resource) (c resource.Resource, ok bool) {
	return copyOf(r)
}

// ForType returns, when [Of] reports true for r, the Of of r's dynamic
// type: a Func that gives for every resource of that very type what Of
// gives, and reports false, having called none of its methods, for a
// resource of any other type (the caller then takes Of). It finds the
// type's copy plan once, here, where Of finds it on every call. For an r
// for which Of reports false, it returns nil and false.
func ForType(r resource.Resource) (of Func, ok bool) {
	return forType(r)
}
