package transform_test

import (
	"context"

	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

type (
	A = fixture.A
	B = fixture.B
	C = fixture.C
)

var (
	kindA = typed.Kind[*A]()
	kindB = typed.Kind[*B]()
	kindC = typed.Kind[*C]()
)

func newA(id string, n int) *A { return fixture.New[fixture.ADef](id, n) }

func ptrA(id string) resource.Pointer { return typed.Pointer[*A](id) }
func ptrB(id string) resource.Pointer { return typed.Pointer[*B](id) }

// double is a TransformFunc: B.N = 2 * A.N.
func double(_ context.Context, _ controller.Reader, _ *zap.Logger, a *A, b *B) error {
	b.TypedSpec().N = 2 * a.TypedSpec().N
	return nil
}

// aToB returns the A → B transform with B.N = 2 * A.N.
func aToB(name string, opts ...transform.ControllerOption) *transform.Controller[*A, *B] {
	return transform.NewController(transform.Settings[*A, *B]{
		Name:            name,
		MapMetadataFunc: fixture.Map[*A, fixture.BDef],
		TransformFunc:   double,
	}, opts...)
}

// recorder records the errors Run returns and the failures it reports
// (controller.ErrorReporter).
type recorder struct {
	controller.Controller
	fixture.Errors
}

func record(c controller.Controller) *recorder {
	return &recorder{Controller: c, Errors: fixture.NewErrors()}
}

func (r *recorder) Run(ctx context.Context, rt controller.Runtime, logger *zap.Logger) error {
	return r.Push(r.Controller.Run(ctx, &reporting{Runtime: rt, errs: r.Errors}, logger))
}

// reporting is a Runtime that records the reported failures, and passes
// them on.
type reporting struct {
	controller.Runtime
	errs fixture.Errors
}

func (r *reporting) ReportError(err error) {
	r.errs.Push(err)
	if rep, ok := r.Runtime.(controller.ErrorReporter); ok {
		rep.ReportError(err)
	}
}

// TakeChanges passes the Runtime's change log on (changelog.Source), so
// that the recorded controller's passes are incremental as they are
// without the recorder.
func (r *reporting) TakeChanges(reuse *changelog.Batch) *changelog.Batch {
	return fixture.TakeChanges(r.Runtime, reuse)
}

func newState() state.State { return inmem.NewState() }
