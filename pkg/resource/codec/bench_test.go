package codec_test

import (
	"testing"
	"time"

	"github.com/resgraph/resgraph/pkg/resource"
)

// pairSpec is the spec of the benchmark workloads (two ints).
type pairSpec struct{ A, B int }

func benchResource() *res[pairSpec] {
	r := newRes("resource-000123", pairSpec{A: 1, B: 2})
	md := r.Metadata()
	md.SetVersion(resource.NewVersion(7))
	_ = md.SetOwner("controller")
	md.SetCreated(time.Now())
	md.SetUpdated(time.Now())
	return r
}

func BenchmarkEncode(b *testing.B) {
	reg := registry(b)
	r := benchResource()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = reg.AppendEncode(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	reg := registry(b)
	enc, err := reg.Encode(benchResource())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendEncode_EmptyLabelsAndAnnotationsAllocateNothing: encoding
// into a buffer with room, a resource whose metadata has no labels and no
// annotations allocates what its spec's encoding does (one allocation:
// encoding/json's result), nothing for the metadata; one label and one
// annotation add only their maps' copies (Raw), no sorting of keys.
func TestAppendEncode_EmptyLabelsAndAnnotationsAllocateNothing(t *testing.T) {
	reg := registry(t)
	r := benchResource()
	buf := make([]byte, 0, 512)
	encode := func() {
		var err error
		if buf, err = reg.AppendEncode(buf[:0], r); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(100, encode); n != 1 {
		t.Fatalf("%v allocations an encoding without labels, want 1 (the spec's)", n)
	}
	r.Metadata().Labels().Set("a", "1")
	r.Metadata().Annotations().Set("b", "2")
	if n := testing.AllocsPerRun(100, encode); n != 1+2+2 {
		t.Fatalf("%v allocations an encoding with one label and one annotation, want 5 (the spec's, the maps' copies)", n)
	}
}
