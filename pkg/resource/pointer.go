package resource

import (
	"errors"
	"strings"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
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

// KindKey is a kind as a comparable value: the one form in which resgraph
// keys, sets and compares kinds. [NewKind] returns one (as a Kind) and
// [KindOf] turns any Kind, Pointer or *Metadata into one; two KindKeys are
// == exactly when their namespaces and types are equal. The zero KindKey
// names no kind.
type KindKey struct {
	ns  Namespace
	typ Type
}

// KindOf returns the KindKey of any Kind, Pointer or *Metadata (the kind a
// pointer is of): the comparable value of the kind, == to the one
// [NewKind] builds from the same namespace and type. k must not be nil
// (see [ValidateKind]).
func KindOf(k Kind) KindKey {
	switch k := k.(type) {
	case KindKey:
		return k
	case PointerKey:
		return k.kind
	case *Metadata:
		ns, typ, _ := k.Identity()
		return KindKey{ns: ns, typ: typ}
	}
	return KindKey{ns: k.Namespace(), typ: k.Type()}
}

// Namespace returns the kind's namespace.
func (k KindKey) Namespace() Namespace { return k.ns }

// Type returns the kind's type.
func (k KindKey) Type() Type { return k.typ }

// String formats the kind as "type(namespace)", as [KindString] does.
func (k KindKey) String() string { return k.typ + "(" + k.ns + ")" }

// Compare orders kinds by namespace, then type: -1, 0 or +1.
func (k KindKey) Compare(o KindKey) int {
	if c := strings.Compare(k.ns, o.ns); c != 0 {
		return c
	}
	return strings.Compare(k.typ, o.typ)
}

// PointerKey is a pointer as a comparable value: the one form in which
// resgraph keys and compares resources. [NewPointer] returns one (as a
// Pointer) and [PointerOf] turns any Pointer (a *Metadata, for example)
// into one; two PointerKeys are == exactly when their namespaces, types
// and IDs are equal.
type PointerKey struct {
	kind KindKey
	id   ID
}

// PointerOf returns the PointerKey naming the same resource as p, which
// may be any Pointer implementation (a *Metadata, for example): the
// comparable value of the pointer, == to the one [NewPointer] builds from
// the same namespace, type and ID. p must not be nil (see
// [ValidatePointer]).
func PointerOf(p Pointer) PointerKey {
	switch p := p.(type) {
	case PointerKey:
		return p
	case *Metadata:
		ns, typ, id := p.Identity()
		return PointerKey{kind: KindKey{ns: ns, typ: typ}, id: id}
	}
	return PointerKey{kind: KindKey{ns: p.Namespace(), typ: p.Type()}, id: p.ID()}
}

// Namespace returns the resource's namespace.
func (p PointerKey) Namespace() Namespace { return p.kind.ns }

// Type returns the resource's type.
func (p PointerKey) Type() Type { return p.kind.typ }

// ID returns the resource's ID.
func (p PointerKey) ID() ID { return p.id }

// Kind returns the kind the resource is of.
func (p PointerKey) Kind() KindKey { return p.kind }

// Identity returns the namespace, type and ID at once, read in place, as
// [Metadata.Identity] does: the getters above have value receivers, and
// each call copies the whole key first (a state's Get reads all three).
func (p *PointerKey) Identity() (Namespace, Type, ID) {
	return p.kind.ns, p.kind.typ, p.id
}

// String formats the pointer as "type(namespace/id)", as [PointerString]
// does.
func (p PointerKey) String() string { return p.kind.typ + "(" + p.kind.ns + "/" + p.id + ")" }

// NewKind returns the kind of namespace ns and type typ: a [KindKey], so
// that kinds built by NewKind are comparable values, == to each other when
// their namespaces and types are. (KindOf(NewKind(ns, typ)) is that
// KindKey.)
func NewKind(ns Namespace, typ Type) Kind { return KindKey{ns: ns, typ: typ} }

// NewPointer returns the pointer to the resource ns/typ/id: a
// [PointerKey], so that pointers built by NewPointer are comparable values,
// == when their namespaces, types and IDs are. (PointerOf(NewPointer(ns,
// typ, id)) is that PointerKey.)
func NewPointer(ns Namespace, typ Type, id ID) Pointer {
	return PointerKey{kind: KindKey{ns: ns, typ: typ}, id: id}
}

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
// its text. It belongs to the invalid class of pkg/state
// (state.IsInvalidError) by having that class's marker method, so that a
// State, and any layer that refuses bad input before it reaches a State,
// returns it as it is.
type identityError struct{ msg string }

func (e *identityError) Error() string { return e.msg }
func (e *identityError) Unwrap() error { return ErrEmptyIdentity }

// InvalidError is the marker method of pkg/state's invalid class.
func (e *identityError) InvalidError() {}

// ValidateKind is the one validation of a kind (rule R3): nil when k names
// a kind, otherwise an error saying what is wrong — "nil kind" (also for
// an interface holding a nil pointer), "kind T(): empty namespace",
// "kind (ns): empty type", "kind (): empty namespace and type". The error
// wraps [ErrEmptyIdentity] and is of the invalid class
// (state.IsInvalidError).
func ValidateKind(k Kind) error {
	var ns, typ string
	switch k := k.(type) {
	case KindKey:
		ns, typ = k.ns, k.typ
	case PointerKey:
		ns, typ = k.kind.ns, k.kind.typ
	case *Metadata:
		if k == nil {
			return &identityError{msg: "nil kind"}
		}
		ns, typ, _ = k.Identity()
	default:
		if usercode.IsNil(k) {
			return &identityError{msg: "nil kind"}
		}
		ns, typ = k.Namespace(), k.Type()
	}
	if ns != "" && typ != "" {
		return nil
	}
	return &identityError{msg: "kind " + typ + "(" + ns + "): empty " + emptyParts(ns, typ, "(a kind has no ID)")}
}

// ValidatePointer is the one validation of a pointer (rule R3): nil when
// p names a resource, otherwise an error saying what is wrong — "nil
// pointer" (also for an interface holding a nil pointer), "resource
// T(/id): empty namespace", "resource T(ns/): empty ID", and so on. The
// error wraps [ErrEmptyIdentity] and is of the invalid class
// (state.IsInvalidError).
func ValidatePointer(p Pointer) error {
	var ns, typ, id string
	switch p := p.(type) {
	case PointerKey:
		ns, typ, id = p.kind.ns, p.kind.typ, p.id
	case *Metadata:
		if p == nil {
			return &identityError{msg: "nil pointer"}
		}
		ns, typ, id = p.Identity()
	default:
		if usercode.IsNil(p) {
			return &identityError{msg: "nil pointer"}
		}
		ns, typ, id = p.Namespace(), p.Type(), p.ID()
	}
	if ns != "" && typ != "" && id != "" {
		return nil
	}
	return &identityError{msg: "resource " + typ + "(" + ns + "/" + id + "): empty " + emptyParts(ns, typ, id)}
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
