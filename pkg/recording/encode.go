package recording

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// The file format (docs/recording-format.md): the magic bytes, the format
// version as a uvarint, then frames — a header, the kinds, the initial
// resources, the changes, and an end frame that counts them. A frame is
// its type (one byte), its payload's length (uvarint), the payload, and
// the CRC-32C of the type and the payload (4 bytes, little endian).
const (
	magic = "RGREC"
	// FormatVersion is the version of the file format this package writes
	// and reads.
	FormatVersion = 5
	// formatV4 is the previous version, which Read still reads: its
	// passes say no batch (Pass.Batch is 0).
	formatV4 = 4
	// formatV3 is the version before, which Read still reads: a
	// recording without passes (Recording.Passes is empty).
	formatV3 = 3
	// maxFrame bounds a frame's payload: a larger length is corruption.
	maxFrame = 64 << 20
)

// Frame types, in the order they appear.
const (
	frameHeader  = 1
	frameKind    = 2
	frameInitial = 3
	frameChange  = 4
	frameFinal   = 5
	frameEnd     = 6
	// framePass (version 4) comes after the changes, before the final
	// resources.
	framePass = 7
)

var frameNames = map[byte]string{frameHeader: "header", frameKind: "kind", frameInitial: "initial", frameChange: "change", frameFinal: "final", frameEnd: "end", framePass: "pass"}

// frameRank is each frame type's place in the file.
var frameRank = map[byte]int{frameHeader: 1, frameKind: 2, frameInitial: 3, frameChange: 4, framePass: 5, frameFinal: 6, frameEnd: 7}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Write writes rec to w in the file format, its resources encoded by reg.
// A resource reg cannot encode fails the write with the codec's error.
func Write(w io.Writer, rec *Recording, reg *codec.Registry) error {
	bw := bufio.NewWriter(w)
	e := encoder{w: bw, reg: reg}
	e.buf = append(e.buf[:0], magic...)
	e.buf = binary.AppendUvarint(e.buf, FormatVersion)
	if _, err := bw.Write(e.buf); err != nil {
		return err
	}
	if err := e.all(rec); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteFile writes rec to the file path (created or truncated, mode 0600:
// a recording holds the daemon's resources).
func WriteFile(path string, rec *Recording, reg *codec.Registry) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return Write(f, rec, reg)
}

type encoder struct {
	w   *bufio.Writer
	reg *codec.Registry
	buf []byte
}

func (e *encoder) all(rec *Recording) error {
	if err := e.frame(frameHeader, appendHeader(nil, rec)); err != nil {
		return err
	}
	for _, k := range rec.Kinds {
		if err := e.frame(frameKind, appendKind(nil, k)); err != nil {
			return err
		}
	}
	for _, r := range rec.Initial {
		b, err := e.reg.Encode(r)
		if err != nil {
			return err
		}
		if err := e.frame(frameInitial, b); err != nil {
			return err
		}
	}
	for _, c := range rec.Changes {
		b, err := appendChange(nil, c, e.reg)
		if err != nil {
			return err
		}
		if err := e.frame(frameChange, b); err != nil {
			return err
		}
	}
	for _, p := range rec.Passes {
		if err := e.frame(framePass, appendPass(nil, p, rec.Kinds)); err != nil {
			return err
		}
	}
	for _, r := range rec.Final {
		b, err := e.reg.Encode(r)
		if err != nil {
			return err
		}
		if err := e.frame(frameFinal, b); err != nil {
			return err
		}
	}
	var end []byte
	for _, n := range []int{len(rec.Kinds), len(rec.Initial), len(rec.Changes), len(rec.Final), len(rec.Passes)} {
		end = binary.AppendUvarint(end, uint64(n))
	}
	return e.frame(frameEnd, end)
}

// frame writes one frame.
func (e *encoder) frame(typ byte, payload []byte) error {
	if len(payload) > maxFrame {
		return fmt.Errorf("recording: a %s frame of %d bytes is larger than the format allows (%d)", frameNames[typ], len(payload), maxFrame)
	}
	e.buf = append(e.buf[:0], typ)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(payload)))
	crc := crc32.Update(crc32.Update(0, castagnoli, []byte{typ}), castagnoli, payload)
	if _, err := e.w.Write(e.buf); err != nil {
		return err
	}
	if _, err := e.w.Write(payload); err != nil {
		return err
	}
	_, err := e.w.Write(binary.LittleEndian.AppendUint32(e.buf[:0], crc))
	return err
}

func appendHeader(b []byte, rec *Recording) []byte {
	for _, t := range []time.Time{rec.Taken, rec.Start, rec.End, rec.Requested} {
		b = appendTime(b, t)
	}
	b = binary.AppendUvarint(b, rec.Revision)
	b = binary.AppendUvarint(b, rec.Coalesced)
	for _, s := range []string{rec.Source, rec.Reason, rec.Replay} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(rec.Controllers)))
	for _, c := range rec.Controllers {
		b = appendString(b, c)
	}
	return b
}

func appendKind(b []byte, k Kind) []byte {
	b = appendString(b, k.Namespace)
	b = appendString(b, k.Type)
	var flags uint64
	if k.Sensitive {
		flags |= kindSensitive
	}
	return binary.AppendUvarint(b, flags)
}

// kindSensitive is the kind frame's flag of a sensitive kind;
// changeCoalesced the change frame's flag of a coalesced change.
const (
	kindSensitive   = 1
	changeCoalesced = 1
)

func appendChange(b []byte, c Change, reg *codec.Registry) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(max(c.Offset, 0)))
	b = binary.AppendUvarint(b, c.Revision)
	b = append(b, byte(c.By), byte(c.Op))
	var flags uint64
	if c.Coalesced {
		flags |= changeCoalesced
	}
	b = binary.AppendUvarint(b, flags)
	b = appendString(b, c.Writer)
	b = appendString(b, c.Action)
	b = appendString(b, c.Pointer.Namespace())
	b = appendString(b, c.Pointer.Type())
	b = appendString(b, c.Pointer.ID())
	b = binary.AppendUvarint(b, c.Version)
	b = binary.AppendUvarint(b, c.Read)
	b = appendString(b, c.Item.Namespace())
	b = appendString(b, c.Item.Type())
	b = appendString(b, c.Item.ID())
	if c.Op == OpRead {
		b = binary.AppendUvarint(b, uint64(len(c.Value)))
		return append(b, c.Value...), nil
	}
	if c.Resource == nil {
		return binary.AppendUvarint(b, 0), nil
	}
	enc, err := reg.Encode(c.Resource)
	if err != nil {
		return nil, err
	}
	b = binary.AppendUvarint(b, uint64(len(enc)))
	return append(b, enc...), nil
}

// appendPass writes a pass: its controller, its item (three strings,
// empty for a Controller's pass), its commits, its reads (a count, then
// each read's number in the pass, revision and kind's number), and its
// batch's revision (version 5; 0 for none).
func appendPass(b []byte, p Pass, kinds []Kind) []byte {
	b = appendString(b, p.Controller)
	b = appendString(b, p.Item.Namespace())
	b = appendString(b, p.Item.Type())
	b = appendString(b, p.Item.ID())
	b = binary.AppendUvarint(b, uint64(max(p.Commits, 0)))
	b = binary.AppendUvarint(b, uint64(len(p.Reads)))
	for _, r := range p.Reads {
		b = binary.AppendUvarint(b, uint64(r.Index))
		b = binary.AppendUvarint(b, r.Revision)
		b = binary.AppendUvarint(b, uint64(kindNumber(kinds, r.Kind)))
	}
	return binary.AppendUvarint(b, p.Batch)
}

// kindNumber is a read's kind in a pass frame: its place in kinds, from
// 1; 0 for none of them.
func kindNumber(kinds []Kind, k resource.KindKey) int {
	for i, x := range kinds {
		if x.Namespace == k.Namespace() && x.Type == k.Type() {
			return i + 1
		}
	}
	return 0
}

// appendTime writes a time as a presence byte and its Unix nanoseconds.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	return binary.AppendVarint(append(b, 1), t.UnixNano())
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
