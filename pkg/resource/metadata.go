package resource

import (
	"fmt"
	"math"
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
//
// The owner, finalizers, labels and annotations (the parts most resources
// have few of, and that change rarely) live behind one pointer, which
// copies of a [Metadata.Freeze]d metadata share until one of them changes
// them (copy on write): a copy of a stored snapshot costs no map or slice
// copy, and a resource without any of them carries nil. Read a resource
// shared between goroutines (a snapshot) only once it is frozen: the
// accessors of a metadata that is not frozen may attach storage to it
// (every state of this module freezes what it shares; see Freeze). Copy a
// metadata you mean to change with Copy or CopyInto: a plain assignment
// of a frozen metadata is frozen too, a read-only view of the snapshot.
type Metadata struct {
	// kind is the namespace and type, interned (see internKind): 8 bytes
	// instead of two strings' 32.
	kind kindHandle
	id   ID
	ver  Version
	// ext is the owner, finalizers, labels and annotations, and a phase
	// other than running and tearing down; nil when there is none of
	// them (see metaExt).
	ext *metaExt
	// The timestamps, as seconds since January 1, year 1 UTC (the zero
	// time is 0) and nanoseconds (see stampOf). A nanosecond count is
	// below 2^30, so the two bits above it in each word hold the rest:
	// createdNsec the frozen flag (see Freeze), updatedNsec the phase
	// code (see phaseCode). With the interned kind and the rarely used
	// parts behind ext, the metadata is 64 bytes (docs/performance.md,
	// "Metadata layout", "Compact metadata" and "The stored resource in
	// 80 bytes").
	createdSec, updatedSec   int64
	createdNsec, updatedNsec uint32
}

// The words createdNsec and updatedNsec: the nanoseconds of a timestamp
// in the low nsecBits bits, a flag or code above them.
const (
	nsecBits = 30
	nsecMask = 1<<nsecBits - 1
	// frozenBit, in createdNsec: the metadata is a shared snapshot from
	// now on (see Freeze).
	frozenBit = 1 << nsecBits
)

// phaseCode is the phase as updatedNsec holds it, in its two bits above
// the nanoseconds: running and tearing down (every phase a state
// stores) are their own value; any other phase, which no state accepts,
// is phaseInExt and lives in the ext (metaExt.phase), so that SetPhase
// keeps every 32-bit phase as it was given.
type phaseCode = uint32

const (
	phaseInExt phaseCode = 2
	phaseMask            = 3 << nsecBits
)

// unixToInternal is the number of seconds from January 1, year 1 to the
// Unix epoch (the zero time.Time is year 1).
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// stampOf returns t as stored: every time.Time has one (the arithmetic
// wraps the same way both ways, so even the extremes round-trip), and two
// times that are Equal have the same stamp. What a stamp drops is t's
// location and monotonic clock reading.
func stampOf(t time.Time) (sec int64, nsec uint32) {
	return t.Unix() + unixToInternal, uint32(t.Nanosecond())
}

// timeOf returns the time of a stamp, in UTC; the zero stamp is the zero
// time.
func timeOf(sec int64, word uint32) time.Time {
	nsec := word & nsecMask
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

// Head returns the version, phase and owner at once, read in place, as
// Identity reads the identity: a state's check of an update reads them
// through a *Metadata on every write, where each getter would copy the
// whole metadata first.
func (md *Metadata) Head() (Version, Phase, Owner) {
	return md.ver, md.phase(), md.ext.ownerOf()
}

// IncarnationOf reports whether md may be a version of the incarnation
// of the resource whose stored metadata is stored: md's creation time is
// unset (the zero time) or stored's. It is
// md.Created().IsZero() || md.Created().Equal(stored.Created()), without
// building the times. (A state gives every incarnation of an ID its own
// creation time, so an update based on an earlier incarnation, destroyed
// and created again since it was read, is told apart by it.)
func (md *Metadata) IncarnationOf(stored *Metadata) bool {
	nsec := md.createdNsec & nsecMask
	return md.createdSec == 0 && nsec == 0 ||
		md.createdSec == stored.createdSec && nsec == stored.createdNsec&nsecMask
}

// CopyStamps sets md's version, creation time and update time to from's,
// as SetVersion(from.Version()), SetCreated(from.Created()) and
// SetUpdated(from.Updated()) would, without building the times: what a
// state does to the metadata it was given once it stored a copy of it.
func (md *Metadata) CopyStamps(from *Metadata) {
	md.ver = from.ver
	md.createdSec = from.createdSec
	md.createdNsec = md.createdNsec&^nsecMask | from.createdNsec&nsecMask
	md.updatedSec = from.updatedSec
	md.updatedNsec = md.updatedNsec&^nsecMask | from.updatedNsec&nsecMask
}

// Phase returns the resource's phase.
func (md Metadata) Phase() Phase { return md.phase() }

// phase returns the phase, read in place: its code, or the ext's when the
// code says it is there (see phaseCode).
func (md *Metadata) phase() Phase {
	if c := md.updatedNsec >> nsecBits; c < phaseInExt {
		return Phase(c)
	}
	return Phase(md.ext.phase)
}

// Owner returns the resource's owner ("" when a user wrote it).
func (md Metadata) Owner() Owner { return md.ext.ownerOf() }

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

// SetPhase sets the phase. A phase is kept in 32 bits: a value beyond
// them (never a valid phase) reads back as [Phase](math.MinInt32), which
// is not a valid phase either.
func (md *Metadata) SetPhase(p Phase) {
	if uint(p) <= uint(PhaseTearingDown) { // a code of its own: inlined
		md.updatedNsec = md.updatedNsec&^phaseMask | uint32(p)<<nsecBits
		return
	}
	md.setPhaseInExt(p)
}

// setPhaseInExt sets a phase that has no code of its own: in the ext,
// which md then holds alone. A frozen md's ext is never written (others
// may share it): a change of a snapshot's phase (a breach of rule S7)
// gives it an ext of its own, shared from now on as a frozen one's is.
func (md *Metadata) setPhaseInExt(p Phase) {
	if p != Phase(int32(p)) {
		p = math.MinInt32
	}
	e := md.ext
	switch {
	case md.Frozen():
		if e == nil {
			e = &metaExt{}
		} else {
			e = e.clone()
		}
		e.shared = true
		md.ext = e
	default:
		e = md.edit()
	}
	e.phase = int32(p)
	md.updatedNsec = md.updatedNsec&^phaseMask | phaseInExt<<nsecBits
}

// SetOwner sets the owner. Replacing a non-empty owner with a different
// non-empty one is refused with an error, so that a resource never changes
// hands by accident: clear it first with SetOwner("") to hand it over on
// purpose. States set the stored owner from their write options and ignore
// the owner carried by the written resource.
func (md *Metadata) SetOwner(owner Owner) error {
	if cur := md.ext.ownerOf(); cur != "" && owner != "" && cur != owner {
		return fmt.Errorf("resource %s: owner is %q, refusing to change it to %q", PointerString(md), cur, owner)
	}
	md.setOwner(owner)
	return nil
}

// ReplaceOwner sets the owner whatever it was. It is what a state does
// when it stores a resource: the stored owner is the one the write names
// (see SetOwner, which refuses to change hands, for everyone else).
func (md *Metadata) ReplaceOwner(owner Owner) { md.setOwner(owner) }

// SetCreated sets the creation timestamp (its instant: see Created).
func (md *Metadata) SetCreated(t time.Time) {
	sec, nsec := stampOf(t)
	md.createdSec, md.createdNsec = sec, md.createdNsec&^nsecMask|nsec
}

// SetUpdated sets the last-update timestamp (its instant: see Created).
func (md *Metadata) SetUpdated(t time.Time) {
	sec, nsec := stampOf(t)
	md.updatedSec, md.updatedNsec = sec, md.updatedNsec&^nsecMask|nsec
}

// Finalizers returns the finalizers for reading and writing (of a frozen
// metadata: for reading only; see Freeze).
func (md *Metadata) Finalizers() *Finalizers {
	if e := md.parts(); e != nil {
		return &e.finalizers
	}
	return new(Finalizers) // frozen, with none: nothing to read
}

// Labels returns the labels for reading and writing (of a frozen
// metadata: for reading only; see Freeze).
func (md *Metadata) Labels() *Labels {
	if e := md.parts(); e != nil {
		return &e.labels
	}
	return new(Labels) // frozen, with none: nothing to read
}

// Annotations returns the annotations for reading and writing (of a
// frozen metadata: for reading only; see Freeze).
func (md *Metadata) Annotations() *Annotations {
	if e := md.parts(); e != nil {
		return &e.annotations
	}
	return new(Annotations) // frozen, with none: nothing to read
}

// Equal reports whether md and other have the same identity, version, phase,
// owner, labels, annotations and finalizers (in order). Timestamps are not
// compared.
func (md Metadata) Equal(other Metadata) bool {
	return md.kind == other.kind && md.id == other.id &&
		md.ver == other.ver && md.phase() == other.phase() && md.ext.equal(other.ext)
}

// Copy returns a copy of md that shares no mutable memory with it: the
// copy is not frozen, and shares md's owner, finalizers, labels and
// annotations only when they can no longer change (md is frozen, or a
// copy of a frozen metadata that did not change them since).
func (md Metadata) Copy() Metadata {
	md.CopyInto(&md)
	return md
}

// CopyInto sets *dst to a copy of md, as Copy does, in place: a
// resource's DeepCopy copies its metadata straight into the new resource,
// without Copy's temporary copy.
func (md *Metadata) CopyInto(dst *Metadata) {
	e := md.ext // read from md, which the caller reads anyway, not dst
	*dst = *md
	dst.createdNsec &^= frozenBit
	if e != nil && !e.shared {
		dst.ext = e.clone()
	}
}

// Freeze makes md a shared snapshot: from now on it is never changed
// (rule S7), its owner, finalizers, labels and annotations are shared by
// its copies (see Copy), and its accessors hand out what it holds without
// attaching anything to it, so that any number of goroutines may read it.
// A state freezes what it stores before anyone else can see it; freezing
// a frozen metadata does nothing.
func (md *Metadata) Freeze() {
	if md.Frozen() {
		return
	}
	md.createdNsec |= frozenBit
	if e := md.ext; e != nil && !e.shared {
		e.shared = true
	}
}

// Frozen reports whether md was frozen (see Freeze): a shared snapshot,
// never to be changed.
func (md *Metadata) Frozen() bool { return md.createdNsec&frozenBit != 0 }

// Unshare gives md storage of its own for its owner, finalizers, labels
// and annotations: a copy of what it shares with other metadata, empty
// storage when it has none; nothing on a frozen metadata (a snapshot is
// never changed). A metadata so unshared before it is frozen hands out
// its own storage, so that a change made to it (a
// breach of rule S7) shows when it is compared with a copy: what a
// state's mutation detector does (see pkg/state/inmem).
func (md *Metadata) Unshare() {
	if md.Frozen() {
		return
	}
	if e := md.ext; e == nil || e.shared {
		md.ext = &metaExt{}
		if e != nil {
			md.ext = e.clone()
		}
	}
}

// ApproxSize estimates the bytes of memory md holds beyond its own size
// and does not share with other metadata: its owner, finalizers, labels
// and annotations, unless it shares them (see Copy).
func (md *Metadata) ApproxSize() int {
	e := md.ext
	if e == nil || e.shared {
		return 0
	}
	return e.approxSize()
}

// parts returns the ext whose owner, finalizers, labels and annotations
// md hands out: its own for writing (see edit) unless md is frozen; when
// frozen, its ext as it is, or nil when that has none to read (see
// metaExt.readable). Kept apart so that the accessors stay inlined, and
// their empty values on the caller's stack.
func (md *Metadata) parts() *metaExt {
	if !md.Frozen() {
		return md.edit()
	}
	if md.ext.readable() {
		return md.ext
	}
	return nil
}

// edit returns md's ext for writing: a new one when md has none, a copy
// of a shared one (which no longer changes) otherwise. A frozen md's ext
// is returned as it is.
func (md *Metadata) edit() *metaExt {
	switch e := md.ext; {
	case e == nil:
		md.ext = &metaExt{}
	case e.shared && !md.Frozen():
		md.ext = e.clone()
	}
	return md.ext
}

// setOwner sets the owner: an owner alone is an interned ext (see
// ownerExt), shared by every metadata with that owner and nothing else
// (a phase in the ext is something else).
func (md *Metadata) setOwner(owner Owner) {
	e := md.ext
	switch {
	case e == nil && owner == "": // no owner still, without comparing strings
	case e.ownerOf() == owner:
	case e == nil || e.ownerOnly() && md.updatedNsec>>nsecBits != phaseInExt:
		md.ext = ownerExt(owner)
	default:
		md.edit().owner = owner
	}
}

// String formats the metadata as "type(namespace/id)@version" followed by
// the phase, owner and finalizers where they are set.
func (md Metadata) String() string {
	var b strings.Builder
	b.WriteString(PointerString(md))
	b.WriteString("@")
	b.WriteString(md.ver.String())
	if p := md.Phase(); p != PhaseRunning {
		b.WriteString(" ")
		b.WriteString(p.String())
	}
	if owner := md.ext.ownerOf(); owner != "" {
		b.WriteString(" owner=")
		b.WriteString(owner)
	}
	if fins := md.ext.finalizersOf(); len(fins) > 0 {
		b.WriteString(" finalizers=")
		b.WriteString(strings.Join(fins, ","))
	}
	return b.String()
}
