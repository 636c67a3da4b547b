package atrest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/resgraph/resgraph/pkg/state/atrest"
)

// fuzzNames are the resources the fuzz target opens records as.
var fuzzNames = [][3]string{{"ns", "T", "a"}, {"ns", "T", "b"}, {"ns2", "T", "a"}, {"n", "sT", "a"}}

// fuzzSealed is a record sealed for the fuzz corpus, with what it holds.
type fuzzSealed struct {
	name  int
	plain []byte
	rec   []byte
}

// fuzzFixture is the Sealer of the fuzz target (two keys; encryption on,
// plaintext refused; compression above 64 bytes) and the records sealed
// with it for the corpus.
func fuzzFixture(tb testing.TB) (*atrest.Sealer, []fuzzSealed) {
	// Fixed keys: the corpus must open in every run.
	k1 := atrest.Key{ID: "k1", Secret: bytes.Repeat([]byte{1}, 32)}
	k2 := atrest.Key{ID: "k2", Secret: bytes.Repeat([]byte{2}, 32)}
	s, err := atrest.New(context.Background(), atrest.Config{Keys: atrest.StaticKeys(k2, k1), CompressAbove: 64})
	if err != nil {
		tb.Fatal(err)
	}
	old, err := atrest.New(context.Background(), atrest.Config{Keys: atrest.StaticKeys(k1), CompressAbove: 64})
	if err != nil {
		tb.Fatal(err)
	}
	var sealed []fuzzSealed
	for i, n := range []int{0, 10, 64, 65, 700} {
		name := i % len(fuzzNames)
		for _, w := range []*atrest.Sealer{s, old} {
			plain := encoding(n)
			rec, err := w.Seal(nil, fuzzNames[name][0], fuzzNames[name][1], fuzzNames[name][2], plain)
			if err != nil {
				tb.Fatal(err)
			}
			sealed = append(sealed, fuzzSealed{name: name, plain: plain, rec: rec})
		}
	}
	return s, sealed
}

// FuzzDecryptRecord: whatever the bytes (truncated, bit-flipped, under
// another key ID, another resource's, random) and whatever resource they
// are opened as, Open never panics, and it either fails with a
// *RecordError and returns nothing, or it returns exactly one of the
// encodings sealed for that very resource (rule P2: never a wrong or
// partial resource). (The corpus's records are sealed again in each
// fuzzing process, with other nonces: the check is on what they hold.)
func FuzzDecryptRecord(f *testing.F) {
	s, sealed := fuzzFixture(f)
	for _, r := range sealed {
		f.Add(r.rec, uint8(r.name))
		f.Add(r.rec[:len(r.rec)/2], uint8(r.name))
		f.Add(r.rec, uint8(r.name+1))
		flipped := bytes.Clone(r.rec)
		flipped[len(flipped)-1] ^= 0x40
		f.Add(flipped, uint8(r.name))
		f.Add(bytes.Replace(r.rec, []byte("k2"), []byte("k1"), 1), uint8(r.name))
	}
	f.Add([]byte("rgs\x01\x02\x02k1"), uint8(0))
	f.Add([]byte("rgs\x01\x01\xff\xff\xff\xff\x0f"), uint8(0))
	f.Fuzz(func(t *testing.T, rec []byte, name uint8) {
		n := fuzzNames[int(name)%len(fuzzNames)]
		out, err := s.Open([]byte("dst"), n[0], n[1], n[2], rec)
		if err != nil {
			if !atrest.IsRecordError(err) {
				t.Fatalf("not a *RecordError: %v", err)
			}
			if string(out) != "dst" {
				t.Fatalf("a failed Open appended %q", out[3:])
			}
			return
		}
		for _, r := range sealed {
			if fuzzNames[r.name] == n && bytes.Equal(out[3:], r.plain) {
				return
			}
		}
		t.Fatalf("bytes opened as %v to %d bytes that were never sealed for it", n, len(out)-3)
	})
}
