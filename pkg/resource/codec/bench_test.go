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
