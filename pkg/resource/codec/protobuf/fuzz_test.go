package protobuf_test

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/codec"
)

// FuzzRoundTrip builds a daemon-style spec from fuzzed values, with its
// containers nil, empty or full by the fuzzer's choice, and checks that it
// round-trips equal under R1; the only values refused are those the
// package documents (a nil element of a slice of pointers, an empty
// element of a [][]byte).
func FuzzRoundTrip(f *testing.F) {
	f.Add("node", "a\x00b", int64(5), uint64(7), 1.5, []byte{1}, uint8(0))
	f.Add("", "", int64(0), uint64(0), 0.0, []byte(nil), uint8(0xff))
	f.Add("\xff", "\x00", int64(math.MinInt64), uint64(math.MaxUint64), math.Copysign(0, -1), []byte{}, uint8(0x5a))
	reg := registry(f)
	f.Fuzz(func(t *testing.T, s, list string, n int64, u uint64, fl float64, b []byte, shape uint8) {
		if math.IsNaN(fl) {
			fl = 0 // a NaN is unequal to itself (R1, as reflect.DeepEqual)
		}
		spec := NetworkSpec{Hostname: s, MTU: uint32(u), Up: n%2 == 0, Timeout: time.Duration(n), Weight: fl, Raw: b,
			Small: int8(n), Since: time.Unix(n%(1<<40), int64(u%1e9))}
		items := strings.Split(list, "\x00")
		if shape&1 != 0 {
			spec.Routes = []RouteSpec{{Tags: items, Priority: uint32(n)}, {}}
			spec.Labels = map[string]string{s: list}
			spec.Counters = map[int32]uint64{int32(n): u}
			spec.ByName = map[string]RouteSpec{list: {Tags: items[:0]}}
		} else if shape&2 != 0 {
			spec.Routes, spec.Labels, spec.Counters, spec.ByName = []RouteSpec{}, map[string]string{}, map[int32]uint64{}, map[string]RouteSpec{}
		}
		if shape&4 != 0 {
			spec.Primary = &RouteSpec{Options: map[string]int{s: int(n)}}
		}
		if shape&8 != 0 {
			var raw [16]byte
			copy(raw[:], b)
			spec.Servers = []netip.Addr{netip.AddrFrom16(raw), netip.AddrFrom4([4]byte(raw[:4]))}
		}
		r := newRes("f", spec)
		enc, err := reg.Encode(r)
		require.NoError(t, err)
		got, err := reg.Decode(enc)
		require.NoError(t, err)
		require.True(t, resource.Equal(r, got), "round trip changed the spec:\n%#v\n%#v", r.Spec(), got.Spec())

		var blobs [][]byte
		for _, it := range items {
			blobs = append(blobs, []byte(it))
		}
		p := newRes("p", withPtrs{Items: []*inner{{A: int(n)}}, Blobs: blobs})
		if shape&16 != 0 {
			p.TypedSpec().Items = append(p.TypedSpec().Items, nil)
		}
		enc, err = reg.Encode(p)
		lossy := shape&16 != 0
		for _, bl := range blobs {
			lossy = lossy || len(bl) == 0
		}
		if lossy {
			require.True(t, codec.IsEncodeError(err), "a value protobuf cannot hold must be refused: %v", err)
			return
		}
		require.NoError(t, err)
		got, err = reg.Decode(enc)
		require.NoError(t, err)
		require.True(t, resource.Equal(p, got), "round trip changed the spec:\n%#v\n%#v", p.Spec(), got.Spec())
	})
}

// FuzzDecode feeds arbitrary spec bytes, in a valid envelope, to the
// protobuf decoder: decoding never panics, fails only with the codec's
// typed errors, and whatever it accepts re-encodes to an equal resource
// (or is refused as a value protobuf cannot hold).
func FuzzDecode(f *testing.F) {
	reg := registry(f)
	envelope, err := reg.Encode(newRes("a", NetworkSpec{}))
	require.NoError(f, err)
	full, err := reg.Encode(newRes("a", fullSpec()))
	require.NoError(f, err)
	f.Add(specBytes(full))
	f.Add([]byte{0x0a, 0x02, 'h', 'i'})
	f.Add([]byte{0x2a, 0x80})
	f.Fuzz(func(t *testing.T, spec []byte) {
		r, err := reg.Decode(withSpec(envelope, spec))
		if err != nil {
			require.True(t, codec.IsDecodeError(err), "untyped error %T: %v", err, err)
			return
		}
		enc, err := reg.Encode(r)
		if err != nil {
			require.True(t, codec.IsEncodeError(err), "%v", err)
			return
		}
		again, err := reg.Decode(enc)
		require.NoError(t, err)
		require.True(t, resource.Equal(r, again), "%#v\n%#v", r.Spec(), again.Spec())
	})
}

// specBytes returns the spec part of an encoding: after the header, the
// metadata length and the metadata, and the format byte, before the
// checksum.
func specBytes(enc []byte) []byte {
	mdLen := int(binary.LittleEndian.Uint32(enc[4:]))
	return enc[8+mdLen+1 : len(enc)-4]
}

// withSpec returns enc with its spec bytes replaced, its checksum valid.
func withSpec(enc, spec []byte) []byte {
	mdLen := int(binary.LittleEndian.Uint32(enc[4:]))
	out := append(append([]byte(nil), enc[:8+mdLen+1]...), spec...)
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, crc32.MakeTable(crc32.Castagnoli)))
}
