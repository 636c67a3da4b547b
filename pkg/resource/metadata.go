package resource

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Metadata is the metadata of a resource. It implements [Pointer].
//
// The zero value is not a valid resource identity; build one with
// [NewMetadata]. Metadata is mutable through its setters; [Metadata.Copy]
// returns a copy that shares no mutable memory with the original.
//
// Timestamps keep the instant they were set to: Created and Updated
// return it in UTC, without the location or the monotonic clock reading
// of the time given to SetCreated or SetUpdated (Equal to it, so compare
// times with Equal).
type Metadata struct {
	// kind is the namespace and type, interned (see internKind): 8 bytes
	// instead of two strings' 32.
	kind        kindHandle
	labels      Labels
	annotations Annotations
	id          ID
	owner       Owner
	finalizers  Finalizers
	ver         Version
	phase       Phase
	// The timestamps, as seconds since January 1, year 1 UTC (the zero
	// time is 0) and nanoseconds: 24 bytes for both instead of the 48 of
	// two time.Time (see stampOf). With the interned kind, the metadata
	// is 120 bytes instead of 168, and a typed resource with a spec of two
	// ints takes 144 bytes instead of 192: every copy a state stores or
	// hands out allocates, clears and moves a quarter less
	// (docs/performance.md, "Metadata layout").
	createdSec, updatedSec   int64
	createdNsec, updatedNsec int32
}

// unixToInternal is the number of seconds from January 1, year 1 to the
// Unix epoch (the zero time.Time is year 1).
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// stampOf returns t as stored: every time.Time has one (the arithmetic
// wraps the same way both ways, so even the extremes round-trip), and two
// times that are Equal have the same stamp. What a stamp drops is t's
// location and monotonic clock reading.
func stampOf(t time.Time) (sec int64, nsec int32) {
	return t.Unix() + unixToInternal, int32(t.Nanosecond())
}

// timeOf returns the time of a stamp, in UTC; the zero stamp is the zero
// time.
func timeOf(sec int64, nsec int32) time.Time {
	if sec == 0 && nsec == 0 {
		return time.Time{}
	}
	return time.Unix(sec-unixToInternal, int64(nsec)).UTC()
}

// NewMetadata returns metadata for the resource ns/typ/id at version ver, in
// phase running, with no owner, labels, annotations or finalizers.
func NewMetadata(ns Namespace, typ Type, id ID, ver Version) Metadata {
	return Metadata{kind: internKind(ns, typ), id: id, ver: ver}
}

// ID returns the resource's ID.
func (md Metadata) ID() ID { return md.id }

// Type returns the resource's type.
func (md Metadata) Type() Type { return md.kind.name().typ }

// Namespace returns the resource's namespace.
func (md Metadata) Namespace() Namespace { return md.kind.name().ns }

// Identity returns the namespace, type and ID at once. It reads them in
// place: the getters above have value receivers, so each call through a
// *Metadata copies the whole metadata first, which hot paths (the
// Runtime's routing of every change) avoid with Identity.
func (md *Metadata) Identity() (Namespace, Type, ID) {
	k := md.kind.name()
	return k.ns, k.typ, md.id
}

// Version returns the resource's version.
func (md Metadata) Version() Version { return md.ver }

// Phase returns the resource's phase.
func (md Metadata) Phase() Phase { return md.phase }

// Owner returns the resource's owner ("" when a user wrote it).
func (md Metadata) Owner() Owner { return md.owner }

// Created returns when the resource was created in the state (zero if never
// stored), in UTC: the metadata keeps the instant a timestamp names, not
// its location or monotonic clock reading, so Created().Equal(t) holds for
// the t of SetCreated(t).
func (md Metadata) Created() time.Time { return timeOf(md.createdSec, md.createdNsec) }

// Updated returns when the resource was last written in the state (zero if
// never stored), in UTC, as Created does.
func (md Metadata) Updated() time.Time { return timeOf(md.updatedSec, md.updatedNsec) }

// SetVersion sets the version.
func (md *Metadata) SetVersion(v Version) { md.ver = v }

// SetPhase sets the phase.
func (md *Metadata) SetPhase(p Phase) { md.phase = p }

// SetOwner sets the owner. Replacing a non-empty owner with a different
// non-empty one is refused with an error, so that a resource never changes
// hands by accident: clear it first with SetOwner("") to hand it over on
// purpose. States set the stored owner from their write options and ignore
// the owner carried by the written resource.
func (md *Metadata) SetOwner(owner Owner) error {
	if md.owner != "" && owner != "" && md.owner != owner {
		return fmt.Errorf("resource %s: owner is %q, refusing to change it to %q", PointerString(md), md.owner, owner)
	}
	md.owner = owner
	return nil
}

// ReplaceOwner sets the owner whatever it was. It is what a state does
// when it stores a resource: the stored owner is the one the write names
// (see SetOwner, which refuses to change hands, for everyone else).
func (md *Metadata) ReplaceOwner(owner Owner) { md.owner = owner }

// SetCreated sets the creation timestamp (its instant: see Created).
func (md *Metadata) SetCreated(t time.Time) { md.createdSec, md.createdNsec = stampOf(t) }

// SetUpdated sets the last-update timestamp (its instant: see Created).
func (md *Metadata) SetUpdated(t time.Time) { md.updatedSec, md.updatedNsec = stampOf(t) }

// Finalizers returns the finalizers for reading and writing.
func (md *Metadata) Finalizers() *Finalizers { return &md.finalizers }

// Labels returns the labels for reading and writing.
func (md *Metadata) Labels() *Labels { return &md.labels }

// Annotations returns the annotations for reading and writing.
func (md *Metadata) Annotations() *Annotations { return &md.annotations }

// Equal reports whether md and other have the same identity, version, phase,
// owner, labels, annotations and finalizers (in order). Timestamps are not
// compared.
func (md Metadata) Equal(other Metadata) bool {
	return md.kind == other.kind && md.id == other.id &&
		md.ver == other.ver && md.phase == other.phase && md.owner == other.owner &&
		slices.Equal(md.finalizers, other.finalizers) &&
		md.labels.Equal(other.labels) && md.annotations.Equal(other.annotations)
}

// Copy returns a copy of md that shares no mutable memory with it.
func (md Metadata) Copy() Metadata {
	md.cloneRefs()
	return md
}

// CopyInto sets *dst to a copy of md that shares no mutable memory with
// it, as Copy does, in place: a resource's DeepCopy copies its metadata
// straight into the new resource, without Copy's temporary copy.
func (md *Metadata) CopyInto(dst *Metadata) {
	*dst = *md
	dst.cloneRefs()
}

// cloneRefs replaces the finalizers, labels and annotations, which md may
// share with another metadata, by copies (nil stays nil).
func (md *Metadata) cloneRefs() {
	if md.finalizers != nil {
		md.finalizers = slices.Clone(md.finalizers)
	}
	if md.labels.m != nil {
		md.labels = Labels{md.labels.clone()}
	}
	if md.annotations.m != nil {
		md.annotations = Annotations{md.annotations.clone()}
	}
}

// String formats the metadata as "type(namespace/id)@version" followed by
// the phase, owner and finalizers where they are set.
func (md Metadata) String() string {
	var b strings.Builder
	b.WriteString(PointerString(md))
	b.WriteString("@")
	b.WriteString(md.ver.String())
	if md.phase != PhaseRunning {
		b.WriteString(" ")
		b.WriteString(md.phase.String())
	}
	if md.owner != "" {
		b.WriteString(" owner=")
		b.WriteString(md.owner)
	}
	if len(md.finalizers) > 0 {
		b.WriteString(" finalizers=")
		b.WriteString(strings.Join(md.finalizers, ","))
	}
	return b.String()
}
