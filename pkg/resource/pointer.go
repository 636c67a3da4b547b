package resource

import (
	"errors"
	"strings"
)

// ID identifies a resource within its namespace and type.
type ID = string

// Type is the type of a resource, conventionally a plural dotted name such as
// "Links.net.resgraph.dev".
type Type = string

// Namespace groups resources; every resource lives in exactly one namespace.
type Namespace = string

// Finalizer is a token that blocks the destruction of a resource until it is
// removed.
type Finalizer = string

// Owner is the name of the controller that owns (wrote) a resource. The empty
// owner means "written by a user, not by a controller".
type Owner = string

// Kind names a collection of resources: a namespace and a type.
type Kind interface {
	Namespace() Namespace
	Type() Type
}

// Pointer names a single resource: a namespace, a type and an ID.
type Pointer interface {
	Kind
	ID() ID
}

// kind is the comparable value type behind [NewKind].
type kind struct {
	ns  Namespace
	typ Type
}

func (k kind) Namespace() Namespace { return k.ns }
func (k kind) Type() Type           { return k.typ }
func (k kind) String() string       { return k.typ + "(" + k.ns + ")" }

// pointer is the comparable value type behind [NewPointer].
type pointer struct {
	ns  Namespace
	typ Type
	id  ID
}

func (p pointer) Namespace() Namespace { return p.ns }
func (p pointer) Type() Type           { return p.typ }
func (p pointer) ID() ID               { return p.id }
func (p pointer) String() string       { return p.typ + "(" + p.ns + "/" + p.id + ")" }

// NewKind returns a Kind. Kinds built by NewKind are comparable values: two
// kinds with the same namespace and type are == to each other.
func NewKind(ns Namespace, typ Type) Kind { return kind{ns: ns, typ: typ} }

// NewPointer returns a Pointer. Pointers built by NewPointer are comparable
// values: two pointers with the same namespace, type and ID are ==.
func NewPointer(ns Namespace, typ Type, id ID) Pointer { return pointer{ns: ns, typ: typ, id: id} }

// KindOf returns the comparable Kind (as built by [NewKind]) of any Kind,
// Pointer or Metadata.
func KindOf(k Kind) Kind { return kind{ns: k.Namespace(), typ: k.Type()} }

// PointerOf returns the comparable Pointer (as built by [NewPointer]) naming
// the same resource as p, which may be any Pointer implementation (a
// *Metadata, for example).
func PointerOf(p Pointer) Pointer { return pointer{ns: p.Namespace(), typ: p.Type(), id: p.ID()} }

// PointerString formats a pointer as "type(namespace/id)".
func PointerString(p Pointer) string {
	return p.Type() + "(" + p.Namespace() + "/" + p.ID() + ")"
}

// KindString formats a kind as "type(namespace)".
func KindString(k Kind) string { return k.Type() + "(" + k.Namespace() + ")" }

// ErrEmptyIdentity is wrapped by the errors of [ValidateKind] and
// [ValidatePointer] (rule R3).
var ErrEmptyIdentity = errors.New("empty namespace, type or ID")

// identityError is an error of [ValidateKind] and [ValidatePointer]: it
// says once what is empty, and wraps [ErrEmptyIdentity] without repeating
// its text.
type identityError struct{ msg string }

func (e *identityError) Error() string { return e.msg }
func (e *identityError) Unwrap() error { return ErrEmptyIdentity }

// ValidateKind reports an error when k is nil or its namespace or type is
// empty (rule R3): "nil kind", "kind T(): empty namespace", "kind (ns):
// empty type", "kind (): empty namespace and type". It wraps
// [ErrEmptyIdentity].
func ValidateKind(k Kind) error {
	if k == nil || isNilPointer(k) {
		return &identityError{msg: "nil kind"}
	}
	if empty := emptyParts(k.Namespace(), k.Type(), "(a kind has no ID)"); empty != "" {
		return &identityError{msg: "kind " + KindString(k) + ": empty " + empty}
	}
	return nil
}

// ValidatePointer reports an error when p is nil or its namespace, type or
// ID is empty (rule R3): "nil pointer", "resource T(/id): empty namespace",
// "resource T(ns/): empty ID", and so on. It wraps [ErrEmptyIdentity].
func ValidatePointer(p Pointer) error {
	if p == nil || isNilPointer(p) {
		return &identityError{msg: "nil pointer"}
	}
	if empty := emptyParts(p.Namespace(), p.Type(), p.ID()); empty != "" {
		return &identityError{msg: "resource " + PointerString(p) + ": empty " + empty}
	}
	return nil
}

// emptyParts names the empty ones of a namespace, type and ID ("namespace",
// "type and ID", "namespace, type and ID"), "" when none is.
func emptyParts(ns, typ, id string) string {
	var parts []string
	for _, p := range []struct{ v, name string }{{ns, "namespace"}, {typ, "type"}, {id, "ID"}} {
		if p.v == "" {
			parts = append(parts, p.name)
		}
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	default:
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
}

// isNilPointer reports whether k is a typed nil *Metadata, the one pointer
// implementation of this package whose methods would panic on nil.
func isNilPointer(k Kind) bool {
	md, ok := k.(*Metadata)
	return ok && md == nil
}
