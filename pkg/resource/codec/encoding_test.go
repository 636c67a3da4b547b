package codec_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/state"
)

// formatTest is a format of the tests: a pairSpec as two varints.
const formatTest codec.Format = 200

type varints struct{ A, B int }

// varintEncoding encodes a varints; it panics on a spec with A == -1 and
// fails on A == -2, and its decoder panics on a single byte.
func varintEncoding() codec.SpecEncoding[varints] {
	return codec.SpecEncoding[varints]{
		Format: formatTest,
		Append: func(dst []byte, s *varints) ([]byte, error) {
			switch s.A {
			case -1:
				panic("encoder panics")
			case -2:
				return nil, errors.New("encoder fails")
			}
			return binary.AppendVarint(binary.AppendVarint(dst, int64(s.A)), int64(s.B)), nil
		},
		Decode: func(data []byte, s *varints) error {
			if len(data) == 1 {
				panic("decoder panics")
			}
			a, n := binary.Varint(data)
			if n <= 0 {
				return errors.New("bad A")
			}
			b, m := binary.Varint(data[n:])
			if m <= 0 || n+m != len(data) {
				return errors.New("bad B")
			}
			s.A, s.B = int(a), int(b)
			return nil
		},
	}
}

// TestRegisterWith_RoundTripAndErrors: a spec encoding of another module
// round-trips; its failures and panics are typed errors; records written
// in JSON before the type switched encodings still decode.
func TestRegisterWith_RoundTripAndErrors(t *testing.T) {
	reg := codec.NewRegistry()
	require.NoError(t, codec.RegisterWith[varints, def[varints]](reg, varintEncoding()))
	require.NoError(t, codec.RegisterWith[varints, def[varints]](reg, varintEncoding()), "again: a no-op")
	assert.Error(t, codec.Register[varints, def[varints]](reg), "the same type in JSON")

	got := roundTrip(t, reg, newRes("x", varints{A: 3, B: -9}))
	assert.Equal(t, varints{A: 3, B: -9}, *got.(*res[varints]).TypedSpec())

	for name, spec := range map[string]varints{"panic": {A: -1}, "error": {A: -2}} {
		_, err := reg.Encode(newRes("e", spec))
		assert.True(t, codec.IsEncodeError(err), "%s: %v", name, err)
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
	}

	// A record written in JSON by a registry where the type was JSON.
	old := codec.NewRegistry()
	require.NoError(t, codec.Register[varints, def[varints]](old))
	b, err := old.Encode(newRes("j", varints{A: 1, B: 2}))
	require.NoError(t, err)
	r, err := reg.Decode(b)
	require.NoError(t, err)
	assert.Equal(t, varints{A: 1, B: 2}, *r.(*res[varints]).TypedSpec())
	// And the reverse is refused: JSON does not read the test format.
	nb, err := reg.Encode(newRes("n", varints{A: 1}))
	require.NoError(t, err)
	_, err = old.Decode(nb)
	assert.True(t, codec.IsDecodeError(err), "%v", err)

	// A decoder panic is a decode error.
	enc, err := reg.Encode(newRes("p", varints{A: 0, B: 0}))
	require.NoError(t, err)
	corrupt := corruptSpec(t, enc, []byte{1})
	_, err = reg.Decode(corrupt)
	assert.True(t, codec.IsDecodeError(err), "%v", err)
	assert.Contains(t, err.Error(), "panicked")
}

// TestRegisterWith_RefusesBadEncodings: this package's formats, missing
// functions and uncopyable specs are refused.
func TestRegisterWith_RefusesBadEncodings(t *testing.T) {
	reg := codec.NewRegistry()
	for name, enc := range map[string]codec.SpecEncoding[varints]{
		"JSON":      {Format: codec.FormatJSON, Append: varintEncoding().Append, Decode: varintEncoding().Decode},
		"own":       {Format: codec.FormatOwn, Append: varintEncoding().Append, Decode: varintEncoding().Decode},
		"no append": {Format: formatTest, Decode: varintEncoding().Decode},
		"no decode": {Format: formatTest, Append: varintEncoding().Append},
	} {
		assert.Error(t, codec.RegisterWith[varints, def[varints]](reg, enc), name)
	}
	type uncopyable struct{ F func() }
	err := codec.RegisterWith[uncopyable, def[uncopyable]](reg, codec.SpecEncoding[uncopyable]{
		Format: formatTest,
		Append: func(dst []byte, _ *uncopyable) ([]byte, error) { return dst, nil },
		Decode: func([]byte, *uncopyable) error { return nil },
	})
	assert.ErrorContains(t, err, "cannot be deep-copied")
	assert.Empty(t, reg.Types())
}

// TestRegister_HintsAtProtobuf: a spec JSON refuses that has protobuf
// field tags is pointed to the protobuf module.
func TestRegister_HintsAtProtobuf(t *testing.T) {
	type tagged struct {
		A int `protobuf:"1"`
		C int `json:"-" protobuf:"2"`
	}
	err := codec.Register[tagged, def[tagged]](codec.NewRegistry())
	assert.ErrorContains(t, err, `json:"-"`)
	assert.ErrorContains(t, err, "pkg/resource/codec/protobuf")
	err = codec.Register[withUnexported, def[withUnexported]](codec.NewRegistry())
	assert.NotContains(t, err.Error(), "protobuf")
}

// corruptSpec replaces the spec bytes of an encoding with spec, keeping
// the checksum valid.
func corruptSpec(t *testing.T, enc, spec []byte) []byte {
	t.Helper()
	mdLen := int(binary.LittleEndian.Uint32(enc[4:]))
	head := append([]byte(nil), enc[:8+mdLen+1]...)
	out := append(head, spec...)
	return binary.LittleEndian.AppendUint32(out, crc32c(out))
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
