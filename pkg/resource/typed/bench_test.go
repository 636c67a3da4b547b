package typed_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// The copy-shape benchmark: one spec shape with slices and maps, copied
// by a hand-written DeepCopy method, by deepcopy-gen's pointer methods,
// and by the copy plan (no method).

type benchShape struct {
	Addrs  []string
	Routes map[string][]int
	Labels map[string]string
	MTU    int
}

func (s *benchShape) fill() {
	s.Addrs = []string{"10.0.0.1/24", "10.0.0.2/24", "fe80::1/64"}
	s.Routes = map[string][]int{"default": {1, 2}, "lan": {3}}
	s.Labels = map[string]string{"zone": "a", "tier": "web"}
	s.MTU = 1500
}

func (s benchShape) handCopy() benchShape {
	c := s
	c.Addrs = slices.Clone(s.Addrs)
	c.Labels = maps.Clone(s.Labels)
	if s.Routes != nil {
		c.Routes = make(map[string][]int, len(s.Routes))
		for k, v := range s.Routes {
			c.Routes[k] = slices.Clone(v)
		}
	}
	return c
}

// methodShape copies itself with a value DeepCopy method.
type methodShape struct{ benchShape }

func (s methodShape) DeepCopy() methodShape { return methodShape{s.handCopy()} }

// genShape has deepcopy-gen's methods.
type genShape struct{ benchShape }

func (in *genShape) DeepCopyInto(out *genShape) { out.benchShape = in.handCopy() }

func (in *genShape) DeepCopy() *genShape {
	out := new(genShape)
	in.DeepCopyInto(out)
	return out
}

// planShape has no method: the copy plan copies it.
type planShape struct{ benchShape }

func benchCopy[S any](b *testing.B, spec S) {
	r := newShape(spec)
	b.ReportAllocs()
	for b.Loop() {
		_ = r.DeepCopy()
	}
}

func benchCreateGet[S any](b *testing.B, spec S) {
	st := inmem.NewState()
	ctx := context.Background()
	ptr := resource.NewPointer("default", "Shapes.test.resgraph.dev", "x")
	b.ReportAllocs()
	for b.Loop() {
		r := newShape(spec)
		if err := st.Create(ctx, r); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Get(ctx, ptr); err != nil {
			b.Fatal(err)
		}
		if err := st.Destroy(ctx, ptr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyShape compares the ways a spec with slices and maps is
// copied: hand-written DeepCopy (the reference), deepcopy-gen's pointer
// methods, and the copy plan; alone and in a Create+Get (+Destroy, to keep
// the state's size constant) round trip.
func BenchmarkCopyShape(b *testing.B) {
	var base benchShape
	base.fill()
	b.Run("DeepCopy/hand", func(b *testing.B) { benchCopy(b, methodShape{base}) })
	b.Run("DeepCopy/gen", func(b *testing.B) { benchCopy(b, genShape{base}) })
	b.Run("DeepCopy/plan", func(b *testing.B) { benchCopy(b, planShape{base}) })
	b.Run("CreateGet/hand", func(b *testing.B) { benchCreateGet(b, methodShape{base}) })
	b.Run("CreateGet/gen", func(b *testing.B) { benchCreateGet(b, genShape{base}) })
	b.Run("CreateGet/plan", func(b *testing.B) { benchCreateGet(b, planShape{base}) })
}

// BenchmarkPlainCopy is the copy of a plain spec (two ints): an
// assignment, no reflection; and of the same spec with a DeepCopy method.
func BenchmarkPlainCopy(b *testing.B) {
	b.Run("assign", func(b *testing.B) { benchCopy(b, countSpec{N: 1}) })
	b.Run("method", func(b *testing.B) { benchCopy(b, linkSpec{MTU: 1}) })
}

var _ typed.DefinitionProvider = shapeDef{}

// bytesSpec is a spec with a byte payload, copied by the copy plan.
type bytesSpec struct {
	Payload []byte
	N       int
}

// BenchmarkCopyBytes is the copy of a spec holding a 512-byte and a
// 64 KiB []byte, by the copy plan, and its comparison with the copy
// (Identical).
func BenchmarkCopyBytes(b *testing.B) {
	for _, size := range []int{512, 64 << 10} {
		r := typed.NewDefault[bytesSpec, shapeDef]("x", bytesSpec{Payload: make([]byte, size)})
		b.Run(fmt.Sprintf("DeepCopy/size=%d", size), func(b *testing.B) { benchCopy(b, bytesSpec{Payload: make([]byte, size)}) })
		c := r.DeepCopy()
		b.Run(fmt.Sprintf("Identical/size=%d", size), func(b *testing.B) {
			for b.Loop() {
				if same, _ := r.Identical(c); !same {
					b.Fatal("not identical")
				}
			}
		})
	}
}
