package recording

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// Read reads a whole recording from r, its resources decoded by reg
// (rule RC4): a recording of another format version is a [*VersionError],
// a file cut short or damaged a [*FormatError] (wrapping [ErrTruncated]
// or [ErrCorrupted]), a recording of types reg does not register an
// [*UnknownTypesError] naming them. On any error no recording is
// returned: never a partial one.
func Read(r io.Reader, reg *codec.Registry) (*Recording, error) {
	d := &decoder{r: bufio.NewReader(r), reg: reg}
	rec, err := d.recording()
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Decode is [Read] of a recording held in memory.
func Decode(data []byte, reg *codec.Registry) (*Recording, error) {
	return Read(bytes.NewReader(data), reg)
}

// ReadFile is [Read] of the file path.
func ReadFile(path string, reg *codec.Registry) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Read(f, reg)
}

type decoder struct {
	r   *bufio.Reader
	reg *codec.Registry
	off int64
	// kinds are the kinds read, for the check of each resource's kind.
	kinds map[resource.KindKey]bool
	// version is the file's format version (FormatVersion, formatV4 or
	// formatV3).
	version uint64
}

// ReadHeader reads the magic, the format version and the header frame of
// a recording from r, and returns a recording that holds the header's
// fields only (Source, Reason, Taken, Start, End, Requested, Revision,
// Coalesced, Replay, Controllers): what a tool needs to say what a file
// is and how to replay it, without the daemon's resource types. It reads
// nothing after the header, so it does not check the rest of the file
// ([Read] does); what it reads fails as Read fails (a [*VersionError], a
// [*FormatError]).
func ReadHeader(r io.Reader) (*Recording, error) {
	d := &decoder{r: bufio.NewReader(r)}
	return d.header()
}

// CheckFrames is [ReadHeader] that also checks the framing of the whole
// file, without the daemon's resource types: every frame after the
// header is read whole, its checksum checked, in the format's order, up
// to the end frame, with nothing after it. A file cut short is a
// [*FormatError] wrapping [ErrTruncated], a damaged frame or frames out of
// order one wrapping [ErrCorrupted]. It does not decode the frames'
// fields or resources ([Read] does), so a file it accepts may still fail
// Read; one it refuses fails Read the same way.
func CheckFrames(r io.Reader) (*Recording, error) {
	d := &decoder{r: bufio.NewReader(r)}
	rec, err := d.header()
	if err != nil {
		return nil, err
	}
	last := byte(frameHeader)
	for last != frameEnd {
		typ, _, at, err := d.frame()
		if err != nil {
			return nil, err
		}
		if err := d.inOrder(typ, last, at); err != nil {
			return nil, err
		}
		last = typ
	}
	if _, err := d.r.ReadByte(); err == nil {
		return nil, corrupt(d.off, "", "bytes after the end frame")
	}
	return rec, nil
}

// inOrder fails when a frame of type typ, at offset at, may not follow a
// frame of type last.
func (d *decoder) inOrder(typ, last byte, at int64) error {
	if frameRank[typ] < frameRank[last] || typ == frameHeader || typ == framePass && d.version == formatV3 {
		return corrupt(at, frameNames[typ], "out of order after a %s frame", frameNames[last])
	}
	return nil
}

func (d *decoder) recording() (*Recording, error) {
	rec, err := d.header()
	if err != nil {
		return nil, err
	}
	return rec, d.body(rec)
}

// header reads the magic, the version and the header frame.
func (d *decoder) header() (*Recording, error) {
	if err := d.magic(); err != nil {
		return nil, err
	}
	rec := &Recording{}
	typ, payload, at, err := d.frame()
	if err != nil {
		return nil, err
	}
	if typ != frameHeader {
		return nil, corrupt(at, frameNames[typ], "the first frame is not the header")
	}
	if err := readHeader(&fields{b: payload, off: at, frame: "header"}, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// magic reads the magic bytes and the format version.
func (d *decoder) magic() error {
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(d.r, head); err != nil || string(head) != magic {
		return &VersionError{Version: -1}
	}
	d.off = int64(len(magic))
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		return truncated(d.off, "")
	}
	if v != FormatVersion && v != formatV4 && v != formatV3 {
		return &VersionError{Version: int(min(v, 1<<31-1))}
	}
	d.version = v
	d.off += int64(len(binary.AppendUvarint(nil, v)))
	return nil
}

// body reads the frames after the header, in their order: kinds,
// initial resources, changes, end.
func (d *decoder) body(rec *Recording) error {
	d.kinds = map[resource.KindKey]bool{}
	last := byte(frameHeader)
	for {
		typ, payload, at, err := d.frame()
		if err != nil {
			return err
		}
		if err := d.inOrder(typ, last, at); err != nil {
			return err
		}
		if frameRank[typ] > frameRank[frameKind] && last <= frameKind {
			if err := d.checkTypes(rec); err != nil {
				return err
			}
		}
		last = typ
		f := &fields{b: payload, off: at, frame: frameNames[typ]}
		switch typ {
		case frameKind:
			err = d.kind(f, rec)
		case frameInitial:
			var r resource.Resource
			if r, err = d.resource(f, payload); err == nil {
				rec.Initial = append(rec.Initial, r)
			}
		case frameChange:
			err = d.change(f, rec)
		case framePass:
			err = d.pass(f, rec)
		case frameFinal:
			var r resource.Resource
			if r, err = d.resource(f, payload); err == nil {
				rec.Final = append(rec.Final, r)
			}
		case frameEnd:
			return d.end(f, rec)
		}
		if err != nil {
			return err
		}
	}
}

// frame reads one frame and checks its checksum.
func (d *decoder) frame() (typ byte, payload []byte, at int64, err error) {
	at = d.off
	typ, err = d.r.ReadByte()
	if err != nil {
		return 0, nil, at, truncated(at, "")
	}
	name, ok := frameNames[typ]
	if !ok {
		return 0, nil, at, corrupt(at, "", "unknown frame type %d", typ)
	}
	n, err := binary.ReadUvarint(d.r)
	if err != nil {
		return 0, nil, at, d.readErr(err, at, name)
	}
	if n > maxFrame {
		return 0, nil, at, corrupt(at, name, "a payload of %d bytes", n)
	}
	// Copied as it comes, so that a corrupted length allocates no more
	// than the bytes there are.
	var buf bytes.Buffer
	if got, err := io.CopyN(&buf, d.r, int64(n)+4); err != nil || got != int64(n)+4 {
		return 0, nil, at, truncated(at, name)
	}
	payload = buf.Bytes()
	sum := binary.LittleEndian.Uint32(payload[n:])
	payload = payload[:n]
	if crc32.Update(crc32.Update(0, castagnoli, []byte{typ}), castagnoli, payload) != sum {
		return 0, nil, at, corrupt(at, name, "checksum mismatch")
	}
	d.off = at + 1 + int64(len(binary.AppendUvarint(nil, n))) + int64(n) + 4
	return typ, payload, at, nil
}

func (d *decoder) readErr(err error, at int64, frame string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return truncated(at, frame)
	}
	return corrupt(at, frame, "%v", err)
}

func (d *decoder) kind(f *fields, rec *Recording) error {
	k := Kind{Namespace: f.str(), Type: f.str()}
	flags := f.uvarint()
	if err := f.done(); err != nil {
		return err
	}
	if k.Namespace == "" || k.Type == "" || flags&^kindSensitive != 0 {
		return corrupt(f.off, f.frame, "kind %q/%q with flags %d", k.Namespace, k.Type, flags)
	}
	k.Sensitive = flags&kindSensitive != 0
	key := resource.KindOf(resource.NewKind(k.Namespace, k.Type))
	if n := len(rec.Kinds); n > 0 && resource.KindOf(resource.NewKind(rec.Kinds[n-1].Namespace, rec.Kinds[n-1].Type)).Compare(key) >= 0 {
		return corrupt(f.off, f.frame, "kinds not sorted at %s", resource.KindString(key))
	}
	d.kinds[key] = true
	rec.Kinds = append(rec.Kinds, k)
	return nil
}

// checkTypes fails with an UnknownTypesError naming every recorded type
// the registry does not register.
func (d *decoder) checkTypes(rec *Recording) error {
	var unknown []string
	for _, k := range rec.Kinds {
		if d.reg == nil || !d.reg.Registered(k.Type) {
			unknown = append(unknown, k.Type)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return &UnknownTypesError{Types: slices.Compact(unknown)}
}

// resource decodes a resource of a recorded kind.
func (d *decoder) resource(f *fields, b []byte) (resource.Resource, error) {
	r, err := d.reg.Decode(b)
	if err != nil {
		return nil, corrupt(f.off, f.frame, "%v", err)
	}
	if !d.kinds[resource.KindOf(r.Metadata())] {
		return nil, corrupt(f.off, f.frame, "%s is of a kind the recording does not list", resource.String(r))
	}
	return r, nil
}

func (d *decoder) change(f *fields, rec *Recording) error {
	c := Change{Offset: time.Duration(f.uvarint()), Revision: f.uvarint()}
	by, op := f.byte(), f.byte()
	c.By, c.Op = By(by), Op(op)
	flags := f.uvarint()
	c.Writer, c.Action = f.str(), f.str()
	ptrNS, ptrType, ptrID := f.str(), f.str(), f.str()
	c.Version = f.uvarint()
	c.Read = f.uvarint()
	itemNS, itemType, itemID := f.str(), f.str(), f.str()
	res := f.bytes()
	if err := f.done(); err != nil {
		return err
	}
	if err := d.changeItem(f, &c, itemNS, itemType, itemID); err != nil {
		return err
	}
	if c.Op == OpRead && c.By == ByWorld {
		c.Value, res = slices.Clone(res), nil
	}
	if c.By != ByWorld {
		if ptrNS == "" || ptrType == "" || ptrID == "" {
			return corrupt(f.off, f.frame, "a change of no resource")
		}
		c.Pointer = resource.PointerOf(resource.NewPointer(ptrNS, ptrType, ptrID))
		if !d.kinds[c.Pointer.Kind()] {
			return corrupt(f.off, f.frame, "%s is of a kind the recording does not list", c.Pointer)
		}
	} else if ptrNS != "" || ptrType != "" || ptrID != "" || c.Version != 0 {
		return corrupt(f.off, f.frame, "a world change names a resource")
	}
	if flags&^changeCoalesced != 0 {
		return corrupt(f.off, f.frame, "unknown flags %d", flags)
	}
	c.Coalesced = flags&changeCoalesced != 0
	if c.Offset < 0 {
		return corrupt(f.off, f.frame, "negative offset")
	}
	if c.Read != 0 && c.By != ByController {
		return corrupt(f.off, f.frame, "a %s change with a pass's read revision", c.By)
	}
	if err := validChange(c, len(res) > 0); err != nil {
		return corrupt(f.off, f.frame, "%v", err)
	}
	if len(res) > 0 {
		r, err := d.resource(f, res)
		if err != nil {
			return err
		}
		if resource.PointerOf(r.Metadata()) != c.Pointer || r.Metadata().Version().Value() != c.Version {
			return corrupt(f.off, f.frame, "the resource %s@%s is not the change's %s@%d", resource.String(r), r.Metadata().Version(), c.Pointer, c.Version)
		}
		c.Resource = r
	}
	rec.Changes = append(rec.Changes, c)
	return nil
}

// pass reads a pass frame (version 4): a controller the header names,
// an item whole or none, and at least one read, their numbers increasing
// and their revisions not 0; from version 5, its batch's revision.
func (d *decoder) pass(f *fields, rec *Recording) error {
	p := Pass{Controller: f.str()}
	ns, typ, id := f.str(), f.str(), f.str()
	commits := f.uvarint()
	n := f.count()
	var badKind uint64
	for range n {
		r := PassRead{Index: uint32(min(f.uvarint(), 1<<32-1)), Revision: f.uvarint()}
		switch k := f.uvarint(); {
		case k > uint64(len(rec.Kinds)):
			badKind = k
		case k > 0:
			r.Kind = resource.KindOf(resource.NewKind(rec.Kinds[k-1].Namespace, rec.Kinds[k-1].Type))
		}
		p.Reads = append(p.Reads, r)
	}
	if d.version >= 5 {
		p.Batch = f.uvarint()
	}
	if err := f.done(); err != nil {
		return err
	}
	if badKind > 0 {
		return corrupt(f.off, f.frame, "a read of kind %d of %d", badKind, len(rec.Kinds))
	}
	if !slices.Contains(rec.Controllers, p.Controller) {
		return corrupt(f.off, f.frame, "a pass of %q, which the header does not name", p.Controller)
	}
	if ns != "" || typ != "" || id != "" {
		if ns == "" || typ == "" || id == "" {
			return corrupt(f.off, f.frame, "a partial item %q/%q/%q", ns, typ, id)
		}
		p.Item = resource.PointerOf(resource.NewPointer(ns, typ, id))
	}
	if commits > 1<<31 {
		return corrupt(f.off, f.frame, "%d commits", commits)
	}
	p.Commits = int(commits)
	if len(p.Reads) == 0 {
		return corrupt(f.off, f.frame, "a pass of no read")
	}
	for i, r := range p.Reads {
		if r.Revision == 0 || i > 0 && r.Index <= p.Reads[i-1].Index {
			return corrupt(f.off, f.frame, "read %d of a pass: number %d at revision %d", i, r.Index, r.Revision)
		}
	}
	rec.Passes = append(rec.Passes, p)
	return nil
}

// changeItem sets the item of a QController's change c from its fields
// (none for any other change).
func (d *decoder) changeItem(f *fields, c *Change, ns, typ, id string) error {
	if ns == "" && typ == "" && id == "" {
		return nil
	}
	if c.By != ByController || ns == "" || typ == "" || id == "" {
		return corrupt(f.off, f.frame, "a %s change with an item %q/%q/%q", c.By, ns, typ, id)
	}
	c.Item = resource.PointerOf(resource.NewPointer(ns, typ, id))
	return nil
}

// validChange checks that a change's fields agree with each other.
func validChange(c Change, hasResource bool) error {
	switch {
	case c.By == ByWorld:
		if c.Op != OpAction && c.Op != OpRead || c.Action == "" || hasResource || c.Writer != "" {
			return errors.New("a world action or read needs a name and nothing else (a read: its value)")
		}
	case c.By == ByOutside:
		if c.Op < OpCreate || c.Op > OpDestroy || !hasResource || c.Action != "" || c.Writer != "" {
			return fmt.Errorf("an outside change with op %d needs a resource, and no action or writer", c.Op)
		}
	case c.By == ByController:
		if c.Op < OpCreate || c.Op > OpDestroy || c.Action != "" {
			return fmt.Errorf("a controller's change with op %d names no action", c.Op)
		}
	default:
		return fmt.Errorf("unknown author %d", c.By)
	}
	return nil
}

func (d *decoder) end(f *fields, rec *Recording) error {
	nk, ni, nc, nf := f.uvarint(), f.uvarint(), f.uvarint(), f.uvarint()
	var np uint64
	if d.version != formatV3 {
		np = f.uvarint()
	}
	if err := f.done(); err != nil {
		return err
	}
	if nk != uint64(len(rec.Kinds)) || ni != uint64(len(rec.Initial)) || nc != uint64(len(rec.Changes)) || nf != uint64(len(rec.Final)) || np != uint64(len(rec.Passes)) {
		return corrupt(f.off, f.frame, "counts %d kinds, %d initial, %d changes, %d final, %d passes; read %d, %d, %d, %d, %d",
			nk, ni, nc, nf, np, len(rec.Kinds), len(rec.Initial), len(rec.Changes), len(rec.Final), len(rec.Passes))
	}
	if _, err := d.r.ReadByte(); err == nil {
		return corrupt(d.off, "", "bytes after the end frame")
	}
	return nil
}

func readHeader(f *fields, rec *Recording) error {
	rec.Taken, rec.Start, rec.End, rec.Requested = f.time(), f.time(), f.time(), f.time()
	rec.Revision, rec.Coalesced = f.uvarint(), f.uvarint()
	rec.Source, rec.Reason, rec.Replay = f.str(), f.str(), f.str()
	n := f.count()
	for range n {
		rec.Controllers = append(rec.Controllers, f.str())
	}
	if err := f.done(); err != nil {
		return err
	}
	if rec.End.Before(rec.Start) {
		return corrupt(f.off, f.frame, "ends (%v) before it starts (%v)", rec.End, rec.Start)
	}
	if !slices.IsSorted(rec.Controllers) || len(slices.Compact(slices.Clone(rec.Controllers))) != len(rec.Controllers) {
		return corrupt(f.off, f.frame, "controllers not sorted and unique")
	}
	return nil
}

// fields reads the fields of one frame's payload; the first error sticks.
type fields struct {
	b     []byte
	off   int64
	frame string
	err   error
}

func (f *fields) fail(what string) {
	if f.err == nil {
		f.err = corrupt(f.off, f.frame, "%s", what)
	}
	f.b = nil
}

func (f *fields) uvarint() uint64 {
	v, n := binary.Uvarint(f.b)
	if n <= 0 {
		f.fail("a number does not decode")
		return 0
	}
	f.b = f.b[n:]
	return v
}

func (f *fields) byte() byte {
	if len(f.b) == 0 {
		f.fail("a field is missing")
		return 0
	}
	v := f.b[0]
	f.b = f.b[1:]
	return v
}

// count reads a count, bounded by the bytes left (each item takes one).
func (f *fields) count() int {
	n := f.uvarint()
	if n > uint64(len(f.b)) {
		f.fail("a count larger than the frame")
		return 0
	}
	return int(n)
}

func (f *fields) bytes() []byte {
	n := f.count()
	b := f.b[:n]
	f.b = f.b[n:]
	return b
}

func (f *fields) str() string {
	b := f.bytes()
	if !utf8.Valid(b) {
		f.fail("a string is not UTF-8")
		return ""
	}
	return string(b)
}

func (f *fields) time() time.Time {
	switch f.byte() {
	case 0:
		return time.Time{}
	case 1:
		v, n := binary.Varint(f.b)
		if n <= 0 {
			f.fail("a time does not decode")
			return time.Time{}
		}
		f.b = f.b[n:]
		return time.Unix(0, v)
	}
	f.fail("a time's presence byte is neither 0 nor 1")
	return time.Time{}
}

// done reports the first error, or trailing bytes.
func (f *fields) done() error {
	if f.err == nil && len(f.b) > 0 {
		return corrupt(f.off, f.frame, "%d bytes left over", len(f.b))
	}
	return f.err
}
