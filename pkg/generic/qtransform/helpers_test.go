package qtransform_test

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

type (
	A = fixture.A
	B = fixture.B
	C = fixture.C
)

var (
	kindB = typed.Kind[*B]()
	kindC = typed.Kind[*C]()
)

func newState() state.State { return inmem.NewState() }

func newA(id string, n int) *A { return fixture.New[fixture.ADef](id, n) }

// teardownAndDestroy tears ptr down and destroys it once its finalizers
// are gone, failing the test if that takes longer than runtimetest.DefaultTimeout.
func teardownAndDestroy(t *testing.T, st state.State, ptr resource.Pointer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runtimetest.DefaultTimeout)
	defer cancel()
	if err := st.TeardownAndDestroy(ctx, ptr); err != nil {
		t.Fatalf("teardown and destroy %s: %v", resource.PointerString(ptr), err)
	}
}

func ptrA(id string) resource.Pointer { return typed.Pointer[*A](id) }
func ptrB(id string) resource.Pointer { return typed.Pointer[*B](id) }

// double is a TransformFunc: B.N = 2 * A.N.
func double(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
	b.TypedSpec().N = 2 * a.TypedSpec().N
	return nil
}

// settings returns the A → B settings with B.N = 2 * A.N.
func settings(name string) qtransform.Settings[*A, *B] {
	return qtransform.Settings[*A, *B]{
		Name:              name,
		MapMetadataFunc:   fixture.Map[*A, fixture.BDef],
		UnmapMetadataFunc: fixture.Map[*B, fixture.ADef],
		TransformFunc:     double,
	}
}

func aToB(name string, opts ...qtransform.ControllerOption) *qtransform.QController[*A, *B] {
	return qtransform.NewQController(settings(name), opts...)
}

// qrecorder records the errors Reconcile and MapInput return.
type qrecorder struct {
	controller.QController
	fixture.Errors
}

func record(c controller.QController) *qrecorder {
	return &qrecorder{QController: c, Errors: fixture.NewErrors()}
}

func (q *qrecorder) Reconcile(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) error {
	return q.Push(q.QController.Reconcile(ctx, logger, r, ptr))
}

func (q *qrecorder) MapInput(ctx context.Context, logger *zap.Logger, r controller.QRuntime, ptr resource.Pointer) ([]resource.Pointer, error) {
	ptrs, err := q.QController.MapInput(ctx, logger, r, ptr)
	return ptrs, q.Push(err)
}
