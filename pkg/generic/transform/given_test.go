package transform_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/generic/internal/fixture"
	"github.com/resgraph/resgraph/pkg/generic/transform"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
)

// mapped records the outputs a MapMetadataFunc returned.
type mapped struct {
	mu   sync.Mutex
	outs []resource.Resource
}

// mapB is fixture.Map, recording what it returns.
func (m *mapped) mapB(in *A) *B {
	out := fixture.Map[*A, fixture.BDef](in)
	m.mu.Lock()
	m.outs = append(m.outs, out)
	m.mu.Unlock()
	return out
}

// has reports whether r is one of the outputs returned (the same object).
func (m *mapped) has(r resource.Resource) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.outs {
		if o == r {
			return true
		}
	}
	return false
}

// startMapping runs the A → B transform over st with mapB of the mapped
// it returns, and with TransformExtraOutputFunc when extra.
func startMapping(t *testing.T, st state.State, extra bool) *mapped {
	t.Helper()
	m := &mapped{}
	settings := transform.Settings[*A, *B]{Name: "AtoB", MapMetadataFunc: m.mapB, TransformFunc: double}
	if extra {
		settings.TransformExtraOutputFunc = func(context.Context, controller.ReaderWriter, *zap.Logger, *A, *B) error { return nil }
	}
	runtimetest.Start(t, runtimetest.WithState(st), runtimetest.WithControllers(transform.NewController(settings)))
	return m
}

// TestACreatedOutputIsStoredWithoutACopy: an output the controller
// creates is the resource MapMetadataFunc returned, filled by
// TransformFunc and given to the state as is (the controller keeps
// nothing of it): no copy of it is made for the store. With
// TransformExtraOutputFunc, which is handed the output as written, a copy
// is stored (rule S7: what user code holds is never the stored snapshot).
func TestACreatedOutputIsStoredWithoutACopy(t *testing.T) {
	for _, extra := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "extra"}[extra], func(t *testing.T) {
			st := newState()
			m := startMapping(t, st, extra)
			// Created once the first pass has run: an output of a later
			// pass is created directly (not by Modify, which copies).
			runtimetest.Create(t, st, newA("a0", 0))
			runtimetest.AssertResource(t, st, "a0", runtimetest.Holds(fixture.RunningN[*B](0)))
			runtimetest.Create(t, st, newA("a1", 1))
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))

			cur, err := st.Get(context.Background(), ptrB("a1"), state.WithReadOnlyGet())
			require.NoError(t, err)
			assert.Equal(t, !extra, m.has(cur), "the stored output is the one mapped (extra: %v)", extra)
		})
	}
}

// TestAnUpdatedOutputIsWrittenInTheMappedResource: the copy of a stored
// output that TransformFunc changes is made in the resource
// MapMetadataFunc returned for the write (the controller keeps nothing of
// it), which is then stored: no copy is allocated for it. With
// TransformExtraOutputFunc the state copies (rule S7).
func TestAnUpdatedOutputIsWrittenInTheMappedResource(t *testing.T) {
	for _, extra := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "extra"}[extra], func(t *testing.T) {
			st := newState()
			runtimetest.Create(t, st, newA("a1", 1))
			m := startMapping(t, st, extra)
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](2)))
			fixture.SetN[*A](t, st, ptrA("a1"), 5)
			runtimetest.AssertResource(t, st, "a1", runtimetest.Holds(fixture.RunningN[*B](10)))

			cur, err := st.Get(context.Background(), ptrB("a1"), state.WithReadOnlyGet())
			require.NoError(t, err)
			assert.Equal(t, !extra, m.has(cur), "the stored output is one mapped (extra: %v)", extra)
		})
	}
}
