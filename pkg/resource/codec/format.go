package codec

import (
	"encoding/binary"
	"hash/crc32"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/resgraph/resgraph/pkg/internal/usercode"
	"github.com/resgraph/resgraph/pkg/resource"
)

// The encoding of a resource (all integers are unsigned varints unless
// said otherwise):
//
//	header   "rgr" and the format version 1 (4 bytes)
//	mdLen    the length of the metadata that follows (4 bytes,
//	         little-endian)
//	metadata namespace, type, ID, owner (each: length, bytes), version,
//	         phase, created and updated (each: 0 for the zero time, else
//	         1, seconds since 1970 as a zigzag varint, nanoseconds),
//	         finalizers (count, then each as length, bytes), labels and
//	         annotations (count, then key and value of each, keys strictly
//	         increasing)
//	format   the spec's format (1 byte: 0 JSON, 1 the spec's own)
//	spec     the spec's bytes, up to the checksum
//	checksum CRC-32C of everything before it (4 bytes, little-endian)
var header = [4]byte{'r', 'g', 'r', 1}

const checksumLen = 4

// maxMetaLen bounds the metadata of one resource.
const maxMetaLen = 1<<31 - 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode returns the encoding of r. It fails with an [*UnknownTypeError]
// when r's type is not registered and an [*EncodeError] when r is not of
// the registered Go type or its spec fails to encode.
func (reg *Registry) Encode(r resource.Resource) ([]byte, error) {
	return reg.AppendEncode(nil, r)
}

// AppendEncode appends the encoding of r to dst and returns the extended
// slice; on error it returns dst unchanged (its spare capacity may have
// been written).
func (reg *Registry) AppendEncode(dst []byte, r resource.Resource) ([]byte, error) {
	if usercode.IsNil(r) || r.Metadata() == nil {
		return dst, &EncodeError{Resource: "<nil>", Err: errFormat("nil resource or metadata")}
	}
	return reg.AppendEncodeWithMetadata(dst, r, r.Metadata())
}

// AppendEncodeWithMetadata is [Registry.AppendEncode] writing md as the
// metadata of r instead of r's own, for a state that stores r with
// metadata it sets itself (version, owner, timestamps) without changing
// r. md must name the same resource as r's metadata.
func (reg *Registry) AppendEncodeWithMetadata(dst []byte, r resource.Resource, md *resource.Metadata) ([]byte, error) {
	if usercode.IsNil(r) || r.Metadata() == nil || md == nil {
		return dst, &EncodeError{Resource: "<nil>", Err: errFormat("nil resource or metadata")}
	}
	if err := resource.ValidatePointer(md); err != nil {
		return dst, &EncodeError{Resource: resource.PointerString(md), Err: err}
	}
	if rmd := r.Metadata(); rmd != md && (rmd.Namespace() != md.Namespace() || rmd.Type() != md.Type() || rmd.ID() != md.ID()) {
		return dst, &EncodeError{Resource: resource.PointerString(md), Err: errFormat("metadata of another resource (%s)", resource.PointerString(rmd))}
	}
	if p := md.Phase(); p != resource.PhaseRunning && p != resource.PhaseTearingDown {
		return dst, &EncodeError{Resource: resource.PointerString(md), Err: errFormat("unknown phase %s", p)}
	}
	e := reg.lookup(md.Type())
	if e == nil {
		return dst, &UnknownTypeError{Type: md.Type()}
	}
	if got := reflect.TypeOf(r); got != e.goType {
		return dst, &EncodeError{Resource: resource.PointerString(md), Err: errFormat("a %s, but the type is registered as %s", got, e.goType)}
	}
	start := len(dst)
	dst = append(dst, header[:]...)
	lpos := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendMeta(dst, md)
	fpos := len(dst)
	if fpos-lpos-4 > maxMetaLen {
		return dst[:start], &EncodeError{Resource: resource.PointerString(md), Err: errFormat("metadata of %d bytes is too large", fpos-lpos-4)}
	}
	binary.LittleEndian.PutUint32(dst[lpos:], uint32(fpos-lpos-4))
	dst = append(dst, 0)
	out, f, err := e.encodeSpec(dst, r)
	if err != nil {
		return dst[:start], &EncodeError{Resource: resource.PointerString(md), Err: err}
	}
	out[fpos] = byte(f)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out[start:], castagnoli)), nil
}

// Decode returns the resource encoded in data, a new value of the Go type
// registered for its type. It fails with an [*UnknownTypeError] for an
// unregistered type and a [*DecodeError] for anything else; it never
// panics. The resource does not reference data.
func (reg *Registry) Decode(data []byte) (resource.Resource, error) {
	if len(data) < len(header)+checksumLen {
		return nil, &DecodeError{Err: errFormat("%d bytes is too short", len(data))}
	}
	if [4]byte(data[:4]) != header {
		return nil, &DecodeError{Err: errFormat("not a resource encoding (header %q)", data[:4])}
	}
	body, sum := data[:len(data)-checksumLen], binary.LittleEndian.Uint32(data[len(data)-checksumLen:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, &DecodeError{Err: errFormat("checksum mismatch: the data is corrupted")}
	}
	rest := body[len(header):]
	if len(rest) < 4 {
		return nil, &DecodeError{Err: errFormat("no metadata length")}
	}
	mdLen := uint64(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if mdLen >= uint64(len(rest)) {
		return nil, &DecodeError{Err: errFormat("metadata length %d exceeds the data", mdLen)}
	}
	md, err := decodeMeta(string(rest[:mdLen]))
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	f, spec := Format(rest[mdLen]), rest[mdLen+1:]
	e := reg.lookup(md.Type())
	if e == nil {
		return nil, &UnknownTypeError{Type: md.Type()}
	}
	r, err := e.decode(md, f, spec)
	if err != nil {
		return nil, &DecodeError{Resource: resource.PointerString(md), Err: err}
	}
	return r, nil
}

func zigzag(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

func appendTime(dst []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = binary.AppendUvarint(dst, zigzag(t.Unix()))
	return binary.AppendUvarint(dst, uint64(t.Nanosecond()))
}

func appendMap(dst []byte, m map[string]string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	if len(m) < 2 { // nothing to sort: no slice of keys
		for k, v := range m {
			dst = appendString(appendString(dst, k), v)
		}
		return dst
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		dst = appendString(appendString(dst, k), m[k])
	}
	return dst
}

// appendMeta appends the metadata of the encoding (see the layout above).
func appendMeta(dst []byte, md *resource.Metadata) []byte {
	dst = appendString(dst, md.Namespace())
	dst = appendString(dst, md.Type())
	dst = appendString(dst, md.ID())
	dst = appendString(dst, md.Owner())
	dst = binary.AppendUvarint(dst, md.Version().Value())
	dst = binary.AppendUvarint(dst, uint64(md.Phase()))
	dst = appendTime(dst, md.Created())
	dst = appendTime(dst, md.Updated())
	fins := *md.Finalizers()
	dst = binary.AppendUvarint(dst, uint64(len(fins)))
	for _, f := range fins {
		dst = appendString(dst, f)
	}
	dst = appendMap(dst, md.Labels().Raw())
	return appendMap(dst, md.Annotations().Raw())
}
