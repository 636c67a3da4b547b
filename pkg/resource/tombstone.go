package resource

// Tombstone is the resource that stands for "this resource does not
// exist": a watch of one resource that does not exist when the watch
// starts reports it as Destroyed with a Tombstone (rule S8 of the state).
// It carries the pointer only — metadata with the namespace, type and ID,
// no version, labels or finalizers — and no spec. Tell it from a resource
// that existed with [IsTombstone], never by looking at its fields.
type Tombstone struct {
	md Metadata
}

// NewTombstone returns the tombstone of the resource ptr points to.
func NewTombstone(ptr Pointer) *Tombstone {
	return &Tombstone{md: NewMetadata(ptr.Namespace(), ptr.Type(), ptr.ID(), VersionUndefined)}
}

// Metadata returns the tombstone's metadata: the pointer, nothing else.
func (t *Tombstone) Metadata() *Metadata { return &t.md }

// Spec returns nil: a tombstone has no spec.
func (t *Tombstone) Spec() any { return nil }

// DeepCopy returns another tombstone of the same resource.
func (t *Tombstone) DeepCopy() Resource { return &Tombstone{md: t.md.Copy()} }

// String formats the tombstone, e.g. "tombstone(type(namespace/id))".
func (t *Tombstone) String() string { return "tombstone(" + PointerString(&t.md) + ")" }

// Tombstone is the marker method of tombstones (see [IsTombstone]).
func (t *Tombstone) Tombstone() {}

// IsTombstone reports whether r stands for a resource that does not exist:
// a [*Tombstone], or any resource type of a backend that has the marker
// method Tombstone() (a remote client's, for one). False for nil.
func IsTombstone(r Resource) bool {
	_, ok := r.(interface{ Tombstone() })
	return ok
}
