package qtransform_test

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/qtransform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
)

// overlaps counts the times a pointer was being worked on by two calls at
// once (Reconcile and MapInput alike).
type overlaps struct {
	mu       sync.Mutex
	inFlight map[resource.ID]int
	count    atomic.Int32
}

func (o *overlaps) enter(id resource.ID) {
	o.mu.Lock()
	o.inFlight[id]++
	if o.inFlight[id] > 1 {
		o.count.Add(1)
	}
	o.mu.Unlock()
	for range 20 {
		goruntime.Gosched() // widen the window
	}
}

func (o *overlaps) leave(id resource.ID) {
	o.mu.Lock()
	o.inFlight[id]--
	o.mu.Unlock()
}

// A qtransform may declare its own input type as an extra mapped input
// (WithExtraMappedInput): a change of an A then goes both to Reconcile(A)
// and to MapInput(A). The Runtime serializes the two for one pointer (rule
// Q2 extended to MapInput), so the mapper and TransformFunc never run at
// once for one A.
func TestReconcileAndMapInputOfOnePointerDoNotOverlap(t *testing.T) {
	o := &overlaps{inFlight: map[resource.ID]int{}}
	s := settings("AtoB")
	s.TransformFunc = func(ctx context.Context, r controller.Reader, l *zap.Logger, a *A, b *B) error {
		o.enter(a.Metadata().ID())
		defer o.leave(a.Metadata().ID())
		return double(ctx, r, l, a, b)
	}
	e := runtimetest.Start(t, runtimetest.WithQControllers(qtransform.NewQController(s,
		qtransform.WithConcurrency(4),
		qtransform.WithExtraMappedInput(func(_ context.Context, _ *zap.Logger, _ controller.QRuntime, a *A) ([]resource.Pointer, error) {
			o.enter(a.Metadata().ID())
			defer o.leave(a.Metadata().ID())
			return []resource.Pointer{a.Metadata()}, nil
		}))))
	st := e.State
	const ids, updates = 4, 1000
	for i := range ids {
		runtimetest.Create(t, st, newA(fmt.Sprintf("a%d", i), 0))
	}
	for u := 1; u <= updates; u++ {
		fixture.SetN[*A](t, st, ptrA(fmt.Sprintf("a%d", u%ids)), u)
	}
	for i := range ids {
		last := updates - (updates-i)%ids
		runtimetest.AssertResource(t, st, fmt.Sprintf("a%d", i), runtimetest.Holds(func(b *B) bool { return b.TypedSpec().N == 2*last }))
	}
	assert.Zero(t, o.count.Load(), "Reconcile and MapInput ran at once for one pointer")
}
