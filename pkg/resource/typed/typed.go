// Package typed provides generic typed resources: a resource whose spec type
// S and definition D are type parameters, so that generic code learns a
// resource type's [Definition] from the type parameter alone and controllers
// never type-assert specs by hand.
//
// A resource type is declared in a few lines:
//
//	type LinkSpec struct{ MTU int }
//	type LinkDef struct{}
//	func (LinkDef) Definition() typed.Definition {
//		return typed.Definition{Type: "Links.net.resgraph.dev", DefaultNamespace: "network"}
//	}
//	type Link = typed.Resource[LinkSpec, LinkDef]
//
// and (*Link)(nil).Definition() returns its definition.
//
// # Copies (rule R2) and equality (rule R1)
//
// [Resource.DeepCopy] returns a copy that shares no mutable memory with
// the original, whatever the spec's shape. The spec is copied by, in this
// order of preference:
//   - its DeepCopy() S method (value receiver), when S has one;
//   - vtprotobuf's CloneVT() S, when S (a pointer to a generated
//     protobuf message) has it;
//   - the copy a [SpecMethods] hook gives for S ([RegisterSpecMethods]):
//     importing package codec/protobuf installs one for every generated
//     protobuf message (S a pointer to it), proto.Clone;
//   - the methods Kubernetes' deepcopy-gen writes, on *S: DeepCopyInto(*S)
//     when present, else DeepCopy() *S;
//   - otherwise a copy plan computed once per spec type by reflection: a
//     plain-value spec (numbers, strings, booleans, arrays and structs of
//     them) is copied by assignment, with no reflection per copy; a spec
//     with slices, maps, pointers or interfaces, at any depth, is assigned
//     and then each of its references is replaced by a copy.
//
// The copy plan copies unexported fields like exported ones. Nil slices,
// maps, pointers and interfaces stay nil; empty ones stay empty (and
// non-nil). Pointers that the original shares, and pointer cycles (in
// recursive types such as lists and trees), are copied once each, so the
// copy has the same shape and copying terminates. Map keys are kept as
// they are (a key is an identity: a pointer key compares by address).
// Values that are immutable by contract are shared: time.Time,
// *time.Location, *regexp.Regexp and the handles of package unique (so
// netip.Addr and netip.Prefix copy as the plain values they are). A value held in an interface is copied by the
// plan of its dynamic type; one without references is shared (it cannot
// be changed in place).
//
// A spec type that the plan cannot copy (it holds a func, a channel, an
// unsafe.Pointer, or a type of package sync or sync/atomic such as
// sync.Mutex, at any depth) is never copied shallowly: DeepCopy panics
// with a [*CopyError] naming the spec type and the field, and a state
// refuses to store such a resource (Create, Update and Modify fail with an
// invalid-class error; nothing is written). [Resource.CopyError] reports
// it without copying. (A func or channel behind an interface is found when
// the value is copied.) A spec with a DeepCopy method is trusted to copy
// itself.
//
// The plan is slower than a hand-written DeepCopy for a spec with slices
// and maps (docs/performance.md has the figure): give a spec that is
// copied on a hot path its own DeepCopy method.
//
// Spec equality (R1) is deep for every shape: a spec's Equal(any) bool
// method (value or pointer receiver) decides; else vtprotobuf's
// EqualVT(S) bool, or a SpecMethods hook's equality (proto.Equal, with a
// nil message equal to an empty one, for a generated message); a
// plain-value spec is
// compared with ==; any other deeply, as reflect.DeepEqual does except
// that a nil slice equals an empty one and a nil map an empty one (at any
// depth), and that time.Time values compare by instant (time.Time.Equal).
// Persistence keeps neither difference (JSON with omitempty and protobuf
// decode an empty slice as nil; encodings keep a time's instant, not its
// monotonic reading or location pointer), so a spec reloaded from a state
// is equal to the one stored.
//
// [Resource.Identical] is stricter: it compares two resources of one type
// by their memory, metadata and spec, without calling the spec's methods
// (a state's mutation detector compares a shared snapshot with its
// reference copy so). Like the copy plan, it is computed once per type:
// plain data (a []byte, numbers, arrays and structs of them) is compared
// in bulk, and only strings, pointers, slices, maps and interfaces are
// followed. A spec compared by EqualVT or a SpecMethods hook (a generated
// protobuf message) is compared by that equality instead: a message
// keeps caches that reads fill (its size cache), which are no change.
//
// # Read-only resources
//
// A resource read from a state's watch, or with a read-only Get or List,
// is a shared snapshot: never change it, not even its spec's slices or
// maps (rule S7 of the state). To change a resource you read, work on a
// copy:
//
//	err := st.Modify(ctx, typed.NewDefault[LinkSpec, LinkDef]("eth0", LinkSpec{}),
//		func(r resource.Resource) error {
//			r.(*Link).TypedSpec().MTU = 9000 // r is a private copy
//			return nil
//		})
//
// or, with a resource ev.Resource received in an event:
//
//	link := ev.Resource.DeepCopy().(*Link)
//	link.TypedSpec().MTU = 9000
//	err := st.Update(ctx, link)
//
// The rules cited here are stated in docs/resources-and-state.md in the repository.
package typed

import (
	"github.com/resgraph/resgraph/pkg/resource"
)

// Definition describes a resource type: its type name and the namespace its
// resources live in by default.
type Definition struct {
	Type             resource.Type
	DefaultNamespace resource.Namespace
}

// DefinitionProvider provides a resource type's definition. Definition must
// be callable on the zero value.
type DefinitionProvider interface {
	Definition() Definition
}

// ResourceWithDefinition is a resource whose type knows its definition:
// generic code (the generic controllers, pkg/safe's ...All helpers) calls
// Definition on the zero value of a type parameter (a nil pointer for a
// *[Resource]) to learn the namespace and type it works on. *[Resource]
// implements it; generic.ResourceWithDefinition is the same interface.
type ResourceWithDefinition interface {
	resource.Resource
	// Definition returns the resource type's definition; it must work on
	// a nil pointer.
	Definition() Definition
}

// DeepCopier is implemented by specs that copy themselves with a value
// receiver: [Resource.DeepCopy] uses the method when S has it.
type DeepCopier[S any] interface {
	DeepCopy() S
}

// Resource is a resource whose spec is of type S and whose definition is
// given by D.
type Resource[S any, D DefinitionProvider] struct {
	md   resource.Metadata
	spec S
	// S's copy plan is found by S (see planOf), not carried: a resource
	// is its metadata and its spec, 80 bytes for a 16-byte spec.
}

// New returns a typed resource with the given metadata and spec. The
// resource owns a copy of md (see [resource.Metadata.Copy]): changing its
// labels, annotations or finalizers never changes md or another resource
// built from md. The spec is stored as given.
func New[S any, D DefinitionProvider](md resource.Metadata, spec S) *Resource[S, D] {
	return &Resource[S, D]{md: md.Copy(), spec: spec}
}

// NewDefault returns a typed resource with ID id in D's default namespace.
func NewDefault[S any, D DefinitionProvider](id resource.ID, spec S) *Resource[S, D] {
	var d D
	def := d.Definition()
	return &Resource[S, D]{md: resource.NewMetadata(def.DefaultNamespace, def.Type, id, resource.VersionUndefined), spec: spec}
}

// Metadata returns the resource's metadata.
func (r *Resource[S, D]) Metadata() *resource.Metadata { return &r.md }

// Spec returns the spec as a value of type S.
func (r *Resource[S, D]) Spec() any { return r.spec }

// TypedSpec returns a pointer to the spec, for reading and writing.
func (r *Resource[S, D]) TypedSpec() *S { return &r.spec }

// Definition returns D's definition; it works on a nil *Resource.
func (r *Resource[S, D]) Definition() Definition {
	var d D
	return d.Definition()
}

// DeepCopy returns a copy that shares no mutable memory with r (rule R2):
// the metadata is copied with [resource.Metadata.Copy], the spec by its
// DeepCopy method when S has one, else by S's copy plan (see the package
// documentation). It panics with a [*CopyError] when S cannot be copied.
func (r *Resource[S, D]) DeepCopy() resource.Resource {
	p := cachedPlan[S]()
	if p == nil {
		p = planOf[S]()
	}
	c := &Resource[S, D]{}
	r.md.CopyInto(&c.md)
	p.copy(&c.spec, &r.spec)
	return c
}

// CopyInto makes dst a deep copy of r, as [Resource.DeepCopy] makes a
// new one, in dst's own storage: dst must be a resource of r's type that
// its caller owns alone. It reports false and changes nothing when dst is
// nil, r itself, of another type, or a shared snapshot (its metadata is
// frozen, see [resource.Metadata.Freeze]): copy with DeepCopy then. It
// panics as DeepCopy does on a spec that cannot be copied, leaving dst
// half written.
func (r *Resource[S, D]) CopyInto(dst resource.Resource) bool {
	c, ok := dst.(*Resource[S, D])
	if !ok || c == nil || c == r || c.md.Frozen() {
		return false
	}
	p := planOf[S]()
	r.md.CopyInto(&c.md)
	var zero S
	c.spec = zero // as DeepCopy's new resource: a copy may leave parts unset
	p.copy(&c.spec, &r.spec)
	return true
}

// CopyError implements [resource.CopyChecker]: why S cannot be deep-copied
// (a [*CopyError]), nil when it can. An interface-typed part of the spec
// is only checked when it is copied.
func (r *Resource[S, D]) CopyError() error {
	if err := planOf[S]().err; err != nil {
		return err
	}
	return nil
}

// CopiesWithoutUserCode reports whether the DeepCopy, CopyInto and
// ApproxSize of self, a value holding r, run no user code, so that they
// cannot panic (short of the runtime running out of memory): true when
// self is r itself (not a type that embeds r, whose methods may be its
// own) and S is a plain-value spec without a [SpecMethods] hook (see the
// package documentation). A state copies such a resource without guarding
// the copy against a panic.
func (r *Resource[S, D]) CopiesWithoutUserCode(self any) bool {
	p, ok := self.(*Resource[S, D])
	if !ok || p != r {
		return false
	}
	if pl := cachedPlan[S](); pl != nil {
		return pl.userFree
	}
	return planOf[S]().userFree
}

// SpecEqual implements [resource.SpecEqualer]: when other is a
// *Resource[S, D] it compares the specs as [resource.SpecEqual] does (a
// spec's Equal(any) bool method decides; otherwise deep equality) and
// reports ok.
func (r *Resource[S, D]) SpecEqual(other resource.Resource) (equal, ok bool) {
	o, isTyped := other.(*Resource[S, D])
	if !isTyped {
		return false, false
	}
	return planOf[S]().equal(&r.spec, &o.spec), true
}
