package runtimetest_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// mutatingTransform keeps a Label per Number, and changes the Number it is
// handed — a read-only snapshot (rule S7) — in place: a bug.
func mutatingTransform() controller.Controller {
	return transform.NewController(transform.Settings[*Number, *Label]{
		Name: "mutator",
		MapMetadataFunc: func(n *Number) *Label {
			return typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
		},
		TransformFunc: func(_ context.Context, _ controller.Reader, _ *zap.Logger, n *Number, l *Label) error {
			n.TypedSpec().N++ // the bug
			l.TypedSpec().Text = "mutated"
			return nil
		},
	})
}

// TestMutationFailsTheTestThatOwnsTheRuntime: in a test, a change of a
// shared snapshot that the mutation detector finds fails the test that
// runs the Runtime with the detector's report (naming the controller that
// held it), and the test's next wait stops it there — the test binary goes
// on (issue 27: the report's panic ended the whole process). Over the
// state runtimetest.NewState makes, as over Start's own.
func TestMutationFailsTheTestThatOwnsTheRuntime(t *testing.T) {
	for name, own := range map[string]bool{"Start's state": false, "runtimetest.NewState": true} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &failTB{TB: t}
				done := make(chan struct{})
				go func() {
					defer close(done)
					var opts []runtimetest.Option
					if own {
						opts = append(opts, runtimetest.WithState(runtimetest.NewState(f)))
					}
					e := runtimetest.Start(f, append(opts, runtimetest.WithControllers(mutatingTransform()))...)
					runtimetest.Create(f, e.State, number("one", 1))
					runtimetest.AssertResource(f, e.State, "one", runtimetest.Holds(func(*Label) bool { return false }))
				}()
				<-done
				assert.Contains(t, f.errors(), "mutation detector")
				assert.Contains(t, f.errors(), "handed to mutator")
				assert.Contains(t, f.msg, "stopped by the mutation detector")
				assert.NotContains(t, f.msg, "within 30s", "stopped at once, not at the timeout")
			})
		})
	}
}
