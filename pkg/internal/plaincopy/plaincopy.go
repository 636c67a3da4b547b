// Package plaincopy lets a state store a resource that copies itself
// without user code (usercode.CopiesPlainly) in one call: the copy to
// store (or the resource itself when the state owns it), its metadata and
// its ApproxSize, each of which would otherwise ask the resource's type
// for its copy plan again.
//
// Package typed registers the only implementation, for its resources, when
// it is initialized; a program that never imports it stores no typed
// resource, and Of reports false for every resource.
package plaincopy

import "github.com/resgraph/resgraph/pkg/resource"

// Func is the form of the registered implementation: see [Of].
type Func func(r resource.Resource, owned bool) (stored resource.Resource, md *resource.Metadata, size int, ok bool)

// of is the registered implementation; written only by Register, from a
// package's init, before any call of Of.
var of Func

// Register makes f the implementation of [Of]. It is called once, from
// the init of package typed: a later call would race with Of.
func Register(f Func) { of = f }

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
	if of == nil {
		return nil, nil, 0, false
	}
	return of(r, owned)
}
