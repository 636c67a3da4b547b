package atrest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// One zstd encoder and one decoder serve every Sealer: EncodeAll and
// DecodeAll are safe for concurrent use, and neither starts a goroutine
// (no stream is ever set on them). Each keeps up to GOMAXPROCS block
// coders, made on first use.
var (
	encoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
		if err != nil {
			panic(fmt.Sprintf("atrest: zstd encoder: %v", err)) // fixed options: cannot fail
		}
		return e
	})
	decoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(maxPlainLen))
		if err != nil {
			panic(fmt.Sprintf("atrest: zstd decoder: %v", err))
		}
		return d
	})
)

// appendCompressed appends the compressed payload of plain (its length,
// then a zstd frame) to dst, and reports whether it is shorter than plain
// (if not, the caller stores plain as it is).
func appendCompressed(dst, plain []byte) ([]byte, bool) {
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(plain)))
	dst = encoder().EncodeAll(plain, dst)
	return dst, len(dst)-start < len(plain)
}

// appendDecompressed appends the encoding a compressed payload holds to
// dst. The payload must decompress to exactly the length it announces.
func appendDecompressed(dst, payload []byte) ([]byte, error) {
	n, w := binary.Uvarint(payload)
	if w <= 0 || n > maxPlainLen {
		return dst, errors.New("bad length of the compressed payload")
	}
	start := len(dst)
	dst = growTo(dst, int(n))
	out, err := decoder().DecodeAll(payload[w:], dst[:start])
	if err != nil {
		return dst[:start], fmt.Errorf("zstd: %w", err)
	}
	if len(out)-start != int(n) {
		return dst[:start], errors.New("the compressed payload is not of its announced length")
	}
	return out, nil
}

// growTo returns dst with room for n more bytes.
func growTo(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	grown := make([]byte, len(dst), len(dst)+n)
	copy(grown, dst)
	return grown
}
