package transform_test

import (
	"context"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource/codec"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

type res[D typed.DefinitionProvider] = *typed.Resource[fixture.Spec, D]

// plusOne is a chain stage: out.N = in.N + 1.
func plusOne[DI, DO typed.DefinitionProvider](name string, opts ...transform.ControllerOption) any {
	return transform.NewController(transform.Settings[res[DI], res[DO]]{
		Name:            name,
		MapMetadataFunc: fixture.Map[res[DI], DO],
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, in res[DI], out res[DO]) error {
			out.TypedSpec().N = in.TypedSpec().N + 1
			return nil
		},
	}, opts...)
}

// chain builds W3's chain A → B → C → D → E of transforms.
func chain(opts ...transform.ControllerOption) func() []any {
	return func() []any {
		return []any{
			plusOne[fixture.ADef, fixture.BDef]("AtoB", opts...),
			plusOne[fixture.BDef, fixture.CDef]("BtoC", opts...),
			plusOne[fixture.CDef, fixture.DDef]("CtoD", opts...),
			plusOne[fixture.DDef, fixture.EDef]("DtoE", opts...),
		}
	}
}

// BenchmarkW3 is workload W3 of bench/README.md: a chain of four transforms,
// N inputs created, then updated, then destroyed.
func BenchmarkW3(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) { fixture.BenchChain(b, n, false, chain()) })
	}
}

// BenchmarkW3Finalizers is W3 with input finalizers on every stage: the
// destroy phase tears every A down, waits for the chain to let go, and
// destroys them.
func BenchmarkW3Finalizers(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			fixture.BenchChain(b, n, true, chain(transform.WithInputFinalizers()))
		})
	}
}

// BenchmarkW3Large is W3 at N = 100k (kept apart: it takes seconds per run).
func BenchmarkW3Large(b *testing.B) {
	b.Run("N=100000", func(b *testing.B) { fixture.BenchChain(b, 100_000, false, chain()) })
}

// BenchmarkMemory is the memory W3 holds and allocates per stored
// resource (the N resources of each of the five kinds; see
// internal/benchmem): N inputs created, then updated, the Runtime running.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("W3/N=%d", n), func(b *testing.B) { fixture.BenchChainMemory(b, n, chain()) })
	}
}

// BenchmarkW3Recorder is W3 (N = 10k) without and with a flight recorder
// of the chain's Runtime (package recording) running beside it: what
// recording costs a daemon — recording from the Runtime's own watches
// (on, the default: rule RC8), and with watches of its own
// (on-own-watches: the state sends every change twice).
func BenchmarkW3Recorder(b *testing.B) {
	b.Run("recorder=off", func(b *testing.B) { fixture.BenchChainWith(b, 10_000, false, nil, chain()) })
	b.Run("recorder=on", func(b *testing.B) { fixture.BenchChainWith(b, 10_000, false, attachRecorder(), chain()) })
	b.Run("recorder=on-own-watches", func(b *testing.B) {
		fixture.BenchChainWith(b, 10_000, false, attachRecorder(recording.WithOwnWatches()), chain())
	})
}

// attachRecorder returns what runs a recorder of rt (with opts) until
// the returned stop, once it read the state.
func attachRecorder(opts ...recording.Option) func(context.Context, state.State, *runtime.Runtime) (func(), error) {
	return func(ctx context.Context, st state.State, rt *runtime.Runtime) (func(), error) {
		return runRecorder(ctx, st, rt, opts)
	}
}

func runRecorder(ctx context.Context, st state.State, rt *runtime.Runtime, opts []recording.Option) (func(), error) {
	reg := codec.NewRegistry()
	for _, err := range []error{
		codec.Register[fixture.Spec, fixture.ADef](reg), codec.Register[fixture.Spec, fixture.BDef](reg),
		codec.Register[fixture.Spec, fixture.CDef](reg), codec.Register[fixture.Spec, fixture.DDef](reg),
		codec.Register[fixture.Spec, fixture.EDef](reg),
	} {
		if err != nil {
			return nil, err
		}
	}
	rec, err := recording.New(st, reg, append([]recording.Option{recording.WithRuntime(rt)}, opts...)...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rec.Run(ctx) }()
	select {
	case <-rec.Started():
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("recorder: %w", err)
	}
	return func() {
		cancel()
		<-done
	}, nil
}
