package runtimetest_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/stretchr/testify/require"
)

// TestTimeoutsNameTheFailingControllers: a wait that times out names the
// controllers of the test's Runtime that are failing, with their last
// errors and parked items (issue 27: "not passed within 30s: --- eth0:
// absent" said nothing of the controller denied access that was to
// write it) — in subtests too; controllers that are fine are not named.
func TestTimeoutsNameTheFailingControllers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		denied := transform.NewController(transform.Settings[*Number, *Label]{
			Name: "denied",
			MapMetadataFunc: func(n *Number) *Label {
				return typed.NewDefault[LabelSpec, LabelDef](n.Metadata().ID(), LabelSpec{})
			},
			TransformFunc: func(ctx context.Context, r controller.Reader, _ *zap.Logger, n *Number, _ *Label) error {
				// Reading a kind it does not declare: denied (rule C3).
				_, err := r.Get(ctx, resource.NewPointer("default", "Others.test.resgraph.dev", "x"))
				return err
			},
		})
		failing := transform.NewController(transform.Settings[*Label, *Other]{
			Name:            "failing",
			MapMetadataFunc: func(l *Label) *Other { return typed.NewDefault[OtherSpec, OtherDef](l.Metadata().ID(), OtherSpec{}) },
			TransformFunc: func(context.Context, controller.Reader, *zap.Logger, *Label, *Other) error {
				return errors.New("the disk is full")
			},
		})
		e := runtimetest.Start(t, runtimetest.WithControllers(denied, failing, numberToLabel2()))
		runtimetest.Create(t, e.State, number("eth0", 1))
		require.NoError(t, e.State.Create(t.Context(), typed.NewDefault[LabelSpec, LabelDef]("lo", LabelSpec{})))

		msg := run(t, func(tb testing.TB) {
			runtimetest.AssertResource(tb, e.State, "eth0", func(*Label, *assert.Assertions) {})
		})
		assert.Contains(t, msg, "not passed within 30s")
		assert.Contains(t, msg, "controllers failing:")
		assert.Contains(t, msg, `denied (running): input Numbers.test.resgraph.dev(default/eth0): TransformFunc: controller "denied": Get Others.test.resgraph.dev(default/x) denied`)
		assert.Contains(t, msg, "failing (running): input Labels.test.resgraph.dev(default/lo): TransformFunc: the disk is full")
		assert.NotContains(t, msg, "number-to-label-2", "a controller that is fine is not named")

		// A subtest's waits name its parent test's controllers (a subtest
		// cannot run in a synctest bubble: its name stands for it).
		msg = run(t, func(tb testing.TB) { runtimetest.AssertNoResource[*Number](subtest{tb}, e.State, "eth0") })
		assert.Contains(t, msg, "controllers failing:")
		assert.Contains(t, msg, "denied (running)")
	})
}

// subtest is tb as a subtest of its test would name itself.
type subtest struct{ testing.TB }

func (s subtest) Name() string { return s.TB.Name() + "/a_subtest" }

type OtherSpec struct{ N int }
type OtherDef struct{}

func (OtherDef) Definition() typed.Definition {
	return typed.Definition{Type: "Others.test.resgraph.dev", DefaultNamespace: "default"}
}

type Other = typed.Resource[OtherSpec, OtherDef]

// numberToLabel2 is a controller that is fine: it reads Numbers, writes
// nothing.
func numberToLabel2() controller.Controller {
	return &funcController{name: "number-to-label-2", input: typed.Kind[*Number](), run: func(context.Context) {}}
}
