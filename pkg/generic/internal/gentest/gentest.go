// Package gentest holds what the tests, examples and benchmarks of the
// generic controllers share: small typed resource types, an engine started
// for the length of a test, and waiting on a condition over the state
// (re-checked on every change, with a deadline, never by sleeping). It is
// imported by test files only.
package gentest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
)

// Namespace is the namespace of every test resource type.
const Namespace = "test"

// Spec is the spec of the test resources: two ints, as in the benchmark
// workloads.
type Spec struct {
	N int
	M int
}

// Test resource types A to E, one namespace, a [Spec] each.
type (
	ADef struct{}
	BDef struct{}
	CDef struct{}
	DDef struct{}
	EDef struct{}
	// A is the first resource type of a chain.
	A = typed.Resource[Spec, ADef]
	// B is the second.
	B = typed.Resource[Spec, BDef]
	// C is the third.
	C = typed.Resource[Spec, CDef]
	// D is the fourth.
	D = typed.Resource[Spec, DDef]
	// E is the fifth.
	E = typed.Resource[Spec, EDef]
)

// Definition implements typed.DefinitionProvider.
func (ADef) Definition() typed.Definition {
	return typed.Definition{Type: "As.test.resgraph.dev", DefaultNamespace: Namespace}
}

// Definition implements typed.DefinitionProvider.
func (BDef) Definition() typed.Definition {
	return typed.Definition{Type: "Bs.test.resgraph.dev", DefaultNamespace: Namespace}
}

// Definition implements typed.DefinitionProvider.
func (CDef) Definition() typed.Definition {
	return typed.Definition{Type: "Cs.test.resgraph.dev", DefaultNamespace: Namespace}
}

// Definition implements typed.DefinitionProvider.
func (DDef) Definition() typed.Definition {
	return typed.Definition{Type: "Ds.test.resgraph.dev", DefaultNamespace: Namespace}
}

// Definition implements typed.DefinitionProvider.
func (EDef) Definition() typed.Definition {
	return typed.Definition{Type: "Es.test.resgraph.dev", DefaultNamespace: Namespace}
}

// New returns a resource of type T (a *typed.Resource[Spec, D]) with the
// given ID and spec N, in T's default namespace.
func New[D typed.DefinitionProvider](id resource.ID, n int) *typed.Resource[Spec, D] {
	return typed.NewDefault[Spec, D](id, Spec{N: n})
}

// Map returns a mapping function to the resource of type To with the input's
// ID and an empty spec.
func Map[From resource.Resource, D typed.DefinitionProvider](in From) *typed.Resource[Spec, D] {
	return typed.NewDefault[Spec, D](in.Metadata().ID(), Spec{})
}

// Kind returns the kind of the resource type with definition provider D.
func Kind[D typed.DefinitionProvider]() resource.Kind {
	var d D
	return resource.NewKind(d.Definition().DefaultNamespace, d.Definition().Type)
}

// Ptr returns the pointer to the resource of D's type with ID id.
func Ptr[D typed.DefinitionProvider](id resource.ID) resource.Pointer {
	var d D
	return resource.NewPointer(d.Definition().DefaultNamespace, d.Definition().Type, id)
}

// Engine is a runtime running over a state until the test ends.
type Engine struct {
	// Runtime is the engine.
	Runtime *runtime.Runtime
	// State is the state it runs over.
	State  state.State
	cancel context.CancelFunc
	done   chan error
}

// Start registers the controllers (controller.Controller or
// controller.QController values) in a new engine over st and runs it. The
// engine is stopped when the test ends (or by [Engine.Stop]); Run must
// then return nil.
func Start(tb testing.TB, st state.State, opts []runtime.Option, ctrls ...any) *Engine {
	tb.Helper()
	return StartWithLogger(tb, zaptest.NewLogger(tb, zaptest.Level(zap.InfoLevel)), st, opts, ctrls...)
}

// StartWithLogger is [Start] with the engine's logger.
func StartWithLogger(tb testing.TB, logger *zap.Logger, st state.State, opts []runtime.Option, ctrls ...any) *Engine {
	tb.Helper()
	rt, err := runtime.New(st, logger, opts...)
	if err != nil {
		tb.Fatalf("runtime.New: %v", err)
	}
	for _, c := range ctrls {
		if err := Register(rt, c); err != nil {
			tb.Fatalf("register: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{Runtime: rt, State: st, cancel: cancel, done: make(chan error, 1)}
	go func() { e.done <- rt.Run(ctx) }()
	tb.Cleanup(func() {
		if err := e.Stop(); err != nil {
			tb.Errorf("engine Run: %v", err)
		}
	})
	return e
}

// Register registers a controller.Controller or controller.QController.
func Register(rt controller.Engine, c any) error {
	switch c := c.(type) {
	case controller.Controller:
		return rt.RegisterController(c)
	case controller.QController:
		return rt.RegisterQController(c)
	default:
		return fmt.Errorf("%T is neither a Controller nor a QController", c)
	}
}

// Stop stops the engine and returns what Run returned; a second Stop
// returns nil.
func (e *Engine) Stop() error {
	e.cancel()
	select {
	case err, ok := <-e.done:
		if ok {
			close(e.done)
		}
		return err
	case <-time.After(30 * time.Second):
		return errors.New("engine Run did not return within 30s of its context being canceled")
	}
}

// DefaultTimeout is how long [Await] waits.
const DefaultTimeout = 30 * time.Second

// Await waits until cond holds, checking it now and again after every
// change of the kinds in st, and fails the test after DefaultTimeout with
// the last reason cond gave.
func Await(tb testing.TB, st state.State, kinds []resource.Kind, cond func(ctx context.Context) (bool, string)) {
	tb.Helper()
	if err := AwaitErr(context.Background(), st, DefaultTimeout, kinds, cond); err != nil {
		tb.Fatal(err)
	}
}

// AwaitErr is [Await] returning an error instead of failing a test.
func AwaitErr(ctx context.Context, st state.State, timeout time.Duration, kinds []resource.Kind, cond func(ctx context.Context) (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	changed := make(chan []state.Event, 1)
	for _, k := range kinds {
		if err := st.WatchKindAggregated(ctx, k, changed); err != nil {
			return fmt.Errorf("watch %s: %w", resource.KindString(k), err)
		}
	}
	var reason string
	for {
		ok, why := cond(ctx)
		if ok {
			return nil
		}
		reason = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("condition not reached within %s: %s", timeout, reason)
		case <-changed:
		}
	}
}
