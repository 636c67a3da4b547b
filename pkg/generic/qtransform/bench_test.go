package qtransform_test

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource/typed"
)

type res[D typed.DefinitionProvider] = *typed.Resource[fixture.Spec, D]

// plusOne is a chain stage: out.N = in.N + 1.
func plusOne[DI, DO typed.DefinitionProvider](name string, opts ...qtransform.ControllerOption) any {
	return qtransform.NewQController(qtransform.Settings[res[DI], res[DO]]{
		Name:              name,
		MapMetadataFunc:   fixture.Map[res[DI], DO],
		UnmapMetadataFunc: fixture.Map[res[DO], DI],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in res[DI], out res[DO]) error {
			out.TypedSpec().N = in.TypedSpec().N + 1
			return nil
		},
	}, opts...)
}

// chain builds W4's chain A → B → C → D → E of qtransforms.
func chain(opts ...qtransform.ControllerOption) func() []any {
	return func() []any {
		return []any{
			plusOne[fixture.ADef, fixture.BDef]("AtoB", opts...),
			plusOne[fixture.BDef, fixture.CDef]("BtoC", opts...),
			plusOne[fixture.CDef, fixture.DDef]("CtoD", opts...),
			plusOne[fixture.DDef, fixture.EDef]("DtoE", opts...),
		}
	}
}

// BenchmarkW4 is workload W4 of bench/README.md: W3 with qtransforms, at
// concurrency 1 and 4, with the default options: every stage holds a
// finalizer on its inputs, so the destroy phase tears every A down, waits
// for the chain to let go, and destroys them.
func BenchmarkW4(b *testing.B) {
	for _, conc := range []uint{1, 4} {
		for _, n := range []int{1_000, 10_000} {
			b.Run(fmt.Sprintf("conc=%d/N=%d", conc, n), func(b *testing.B) {
				fixture.BenchChain(b, n, true, chain(qtransform.WithConcurrency(conc)))
			})
		}
	}
}

// BenchmarkW4NoFinalizers is W4 (concurrency 1) without input finalizers.
func BenchmarkW4NoFinalizers(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			fixture.BenchChain(b, n, false, chain(qtransform.WithoutInputFinalizers()))
		})
	}
}

// BenchmarkW4Large is W4 at N = 100k (kept apart: it takes seconds per run).
func BenchmarkW4Large(b *testing.B) {
	for _, conc := range []uint{1, 4} {
		b.Run(fmt.Sprintf("conc=%d/N=100000", conc), func(b *testing.B) {
			fixture.BenchChain(b, 100_000, true, chain(qtransform.WithConcurrency(conc)))
		})
	}
}
