package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/internal/changelog"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// taken is one change-log batch a Controller took.
type taken struct {
	run  int
	full bool
	ids  []resource.ID
}

// TestG3_TheChangeLogHoldsTheChangesRoutedAndARestartMakesItFull: a
// Controller's change log (changelog.Source of its controller.Runtime)
// holds the IDs of the input changes routed to it since its last batch;
// the first batch of every Run, a restart's included, is full, even when
// changes were logged before the restart.
func TestG3_TheChangeLogHoldsTheChangesRoutedAndARestartMakesItFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		got := make(chan taken, 16)
		proceed := make(chan struct{})
		runs := 0
		c := &funcController{name: "log", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				runs++
				src, ok := r.(changelog.Source)
				if !ok {
					return errors.New("no change log")
				}
				var b *changelog.Batch
				for {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					b = src.TakeChanges(b)
					ids := slices.Clone(b.IDs(resource.KindOf(kind(typeA))))
					got <- taken{run: runs, full: b.Full, ids: ids}
					if runs == 1 && slices.Contains(ids, "x") {
						<-proceed
						return errors.New("restart me")
					}
				}
			}}
		start(t, runtimetest.WithState(st), runtimetest.WithControllers(c))
		assert.Equal(t, taken{run: 1, full: true}, <-got, "the first batch of a Run is full")

		mustCreate(t, st, newPair(typeA, "x", 0))
		synctest.Wait()
		assert.Equal(t, taken{run: 1, ids: []resource.ID{"x"}}, <-got)

		mustCreate(t, st, newPair(typeA, "y", 0)) // logged; the Run fails before taking it
		synctest.Wait()
		close(proceed)
		next := <-got // after the restart backoff
		assert.Equal(t, 2, next.run)
		assert.True(t, next.full, "a restarted Run starts with a full batch: %v", next.ids)
	})
}

// TestG3_AControllerSizesItsChangeLog: a Controller that asks its log
// (changelog.Sizer of its controller.Runtime) to hold more IDs than the
// default limit gets every change routed in one batch, however many, up to
// what it asked for; past it the batch is full.
func TestG3_AControllerSizesItsChangeLog(t *testing.T) {
	const n = changelog.DefaultLimit + 10
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		got := make(chan taken, 4)
		proceed := make(chan struct{})
		c := &funcController{name: "log", inputs: []controller.Input{in(typeA, controller.InputWeak)},
			run: func(ctx context.Context, r controller.Runtime, _ *zap.Logger) error {
				src, ok := r.(changelog.Source)
				sizer, sized := r.(changelog.Sizer)
				if !ok || !sized {
					return errors.New("no sizable change log")
				}
				sizer.SizeChanges(n)
				var b *changelog.Batch
				for pass := 0; ; pass++ {
					select {
					case <-ctx.Done():
						return nil
					case <-r.EventCh():
					}
					b = src.TakeChanges(b)
					got <- taken{full: b.Full, ids: slices.Clone(b.IDs(resource.KindOf(kind(typeA))))}
					if pass == 0 {
						<-proceed // the changes pile up in the log meanwhile
					}
				}
			}}
		start(t, runtimetest.WithState(st), runtimetest.WithControllers(c))
		assert.True(t, (<-got).full, "the first batch of a Run is full")

		for i := range n {
			mustCreate(t, st, newPair(typeA, fmt.Sprintf("a%06d", i), 0))
		}
		synctest.Wait()
		close(proceed)
		b := <-got
		assert.False(t, b.full, "%d changes in a log sized for %d", n, n)
		assert.Len(t, b.ids, n)
	})
}
