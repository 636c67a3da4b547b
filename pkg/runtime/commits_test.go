package runtime_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/observe/trace"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime/runtimetest"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// commitCase is one kind of write a controller makes, called with a
// pointer that carries an older version than the one written (the
// metadata of a snapshot the controller read earlier, as controllers
// pass it), and the version the write leaves the resource at (the state's
// version after it; for a destroy, the version destroyed).
type commitCase struct {
	name string
	op   string
	// write makes the write through r; stale is the metadata of the
	// resource as the controller read it before.
	write func(ctx context.Context, r controller.Runtime, stale *resource.Metadata) error
	// target is the resource written.
	target resource.Pointer
}

// commitCases are the writes of TestTrace_EveryWriteCarriesItsCommittedVersion,
// in order: each leaves the resources ready for the next.
func commitCases() []commitCase {
	a1, b1 := ptr(typeA, "1"), ptr(typeB, "1")
	return []commitCase{
		{"Create", "create", func(ctx context.Context, r controller.Runtime, _ *resource.Metadata) error {
			return r.Create(ctx, newPair(typeB, "1", 1))
		}, b1},
		{"Update", "update", func(ctx context.Context, r controller.Runtime, _ *resource.Metadata) error {
			cur, err := r.Get(ctx, b1)
			if err != nil {
				return err
			}
			cur.(*Pair).TypedSpec().A = 2
			return r.Update(ctx, cur)
		}, b1},
		{"Modify", "modify", func(ctx context.Context, r controller.Runtime, _ *resource.Metadata) error {
			return r.Modify(ctx, newPair(typeB, "1", 0), func(res resource.Resource) error {
				res.(*Pair).TypedSpec().A = 3
				return nil
			})
		}, b1},
		{"ModifyWithResult", "modify", func(ctx context.Context, r controller.Runtime, _ *resource.Metadata) error {
			_, err := r.ModifyWithResult(ctx, newPair(typeB, "1", 0), func(res resource.Resource) error {
				res.(*Pair).TypedSpec().A = 4
				return nil
			})
			return err
		}, b1},
		{"AddFinalizer on an input", "addFinalizer", func(ctx context.Context, r controller.Runtime, stale *resource.Metadata) error {
			return r.AddFinalizer(ctx, stale, "w")
		}, a1},
		{"RemoveFinalizer on an input", "removeFinalizer", func(ctx context.Context, r controller.Runtime, stale *resource.Metadata) error {
			return r.RemoveFinalizer(ctx, stale, "w")
		}, a1},
		{"AddFinalizer on an output", "addFinalizer", func(ctx context.Context, r controller.Runtime, stale *resource.Metadata) error {
			return r.AddFinalizer(ctx, stale, "hold")
		}, b1},
		{"Teardown", "teardown", func(ctx context.Context, r controller.Runtime, stale *resource.Metadata) error {
			_, err := r.Teardown(ctx, stale)
			return err
		}, b1},
		{"RemoveFinalizer on an output", "removeFinalizer", func(ctx context.Context, r controller.Runtime, stale *resource.Metadata) error {
			return r.RemoveFinalizer(ctx, stale, "hold")
		}, b1},
		{"Destroy", "destroy", func(ctx context.Context, r controller.Runtime, _ *resource.Metadata) error {
			return r.Destroy(ctx, b1) // a pointer with no version at all
		}, b1},
	}
}

// TestTrace_EveryWriteCarriesItsCommittedVersion: every write the Runtime
// makes for a controller is traced as a commit of the version it
// committed — for a destroy, the version it destroyed — whatever version
// the pointer it was given carries (issue 27: a finalizer edit was traced
// with the version before it, and explain then listed the version it wrote
// as "updated from outside the engine"). A write that had nothing to do (a
// finalizer already there, a teardown of a resource tearing down) is
// traced as a no-op, never as a commit. Explain lists every change the
// controller made as the controller's.
func TestTrace_EveryWriteCarriesItsCommittedVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewState()
		ctx := t.Context()
		e, r := writeEachCase(t, st, func(_ commitCase, after uint64) uint64 { return after })

		// Writes that had nothing to do: no-ops, never commits.
		mustCreate(t, st, newPair(typeB, "2", 1))
		b2 := ptr(typeB, "2")
		require.NoError(t, st.AddFinalizer(ctx, ptr(typeA, "1"), "w"))
		synctest.Wait()
		_, err := st.Teardown(ctx, b2)
		require.NoError(t, err)
		n := len(commitsBy(e.Runtime.Observe().Trace().Snapshot(), "w", trace.Ref{}))
		require.NoError(t, r.AddFinalizer(ctx, ptr(typeA, "1"), "w"), "already there")
		_, err = r.Teardown(ctx, b2, controller.WithOwner(""))
		require.NoError(t, err, "already tearing down")
		evs := e.Runtime.Observe().Trace().Snapshot()
		assert.Len(t, commitsBy(evs, "w", trace.Ref{}), n, "no commit for writes that wrote nothing")
		assert.NotEmpty(t, noopsBy(evs, "w", refOfPointer(ptr(typeA, "1")), "addFinalizer"))
		assert.NotEmpty(t, noopsBy(evs, "w", refOfPointer(b2), "teardown"))

		// Explain: every version the controller wrote is its own, and the
		// destroy is a change of its own beside the write of the version
		// it destroyed; a Modify is listed by what it did (an update here).
		for _, p := range []resource.Pointer{ptr(typeA, "1"), ptr(typeB, "1")} {
			x, err := e.Runtime.Observe().Explain(ctx, p)
			require.NoError(t, err)
			if p.Type() == typeB {
				var ops []string
				for _, ch := range x.Changes {
					ops = append(ops, fmt.Sprintf("v%d %s", ch.Version, ch.Op))
				}
				assert.Equal(t, []string{"v7 destroy", "v7 removeFinalizer", "v6 teardown", "v5 addFinalizer", "v4 update", "v3 update", "v2 update", "v1 create"}, ops)
			}
			for _, ch := range x.Changes {
				if p.Type() == typeA && (ch.Version == 1 || ch.Version == 4) {
					assert.Empty(t, ch.Writer, "A v1 (created) and v4 (a finalizer) are the test's")
					continue
				}
				assert.Equal(t, "w", ch.Writer, "%s v%d %s: a write of the controller, not from outside", resource.PointerString(p), ch.Version, ch.Op)
			}
		}
	})
}

// foreignState is a State that is not a state.CommitReporter (nor any of
// the optional interfaces of WrapCore's States).
type foreignState struct{ state.State }

// TestTrace_WritesOverAForeignStateCarryTheVersionReadBack: over a State
// that does not report the versions its writes commit, a teardown or a
// finalizer edit is traced with the version read after it, and a destroy
// with no version (unknown), never the version of the pointer given.
func TestTrace_WritesOverAForeignStateCarryTheVersionReadBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		writeEachCase(t, foreignState{inmem.NewState()}, func(tc commitCase, after uint64) uint64 {
			if tc.op == "destroy" {
				return 0 // unknown
			}
			return after
		})
	})
}

// writeEachCase runs a controller w over st (holding A/1), makes each
// write of commitCases through its runtime, given the metadata of the
// resource as it was before the write, and checks that its last commit in
// the trace is of the write's op and carries want(tc, the version after
// the write: see versionAfter). It returns the test Runtime and w's
// runtime.
func writeEachCase(t *testing.T, st state.State, want func(tc commitCase, after uint64) uint64) (*runtimetest.Env, controller.Runtime) {
	t.Helper()
	ctx := t.Context()
	mustCreate(t, st, newPair(typeA, "1", 1))
	c, rts := captureRuntime("w", []controller.Input{in(typeA, controller.InputStrong)}, []controller.Output{out(typeB, controller.OutputExclusive)})
	e := start(t, runtimetest.WithState(st), runtimetest.WithControllers(c))
	r := <-rts
	for _, tc := range commitCases() {
		// The metadata the controller read before the write: an older
		// version than the one it writes.
		var stale *resource.Metadata
		if before, err := st.Get(ctx, tc.target); err == nil {
			stale = before.Metadata()
		}
		require.NoError(t, tc.write(ctx, r, stale), tc.name)
		synctest.Wait()
		commits := commitsBy(e.Runtime.Observe().Trace().Snapshot(), "w", refOfPointer(tc.target))
		require.NotEmpty(t, commits, tc.name)
		last := commits[len(commits)-1]
		assert.Equal(t, tc.op, last.Op, tc.name)
		assert.Equal(t, want(tc, versionAfter(t, st, tc.target, stale)), last.Resource.Version, "%s: the version committed", tc.name)
	}
	return e, r
}

// versionAfter is the version a write of ptr left: the stored version, or
// for a destroyed resource the version it had before (stale's).
func versionAfter(t *testing.T, st state.State, p resource.Pointer, stale *resource.Metadata) uint64 {
	t.Helper()
	cur, err := st.Get(t.Context(), p)
	if state.IsNotFoundError(err) {
		require.NotNil(t, stale)
		return stale.Version().Value()
	}
	require.NoError(t, err)
	return cur.Metadata().Version().Value()
}

// refOfPointer names p in the trace.
func refOfPointer(p resource.Pointer) trace.Ref {
	return trace.Ref{Namespace: p.Namespace(), Type: p.Type(), ID: p.ID()}
}

// commitsBy returns the commits of controller in evs about the resource
// ref (about any resource for a zero ref).
func commitsBy(evs []trace.Record, controller string, ref trace.Ref) []trace.Record {
	var out []trace.Record
	for _, e := range evs {
		if e.Type == trace.Commit && e.Controller == controller && (ref.IsZero() || e.Resource.SameResource(ref)) {
			out = append(out, e)
		}
	}
	return out
}

// noopsBy returns the no-op writes op of controller in evs about ref.
func noopsBy(evs []trace.Record, controller string, ref trace.Ref, op string) []trace.Record {
	var out []trace.Record
	for _, e := range eventsOf(evs, trace.Noop, ref) {
		if e.Controller == controller && e.Op == op {
			out = append(out, e)
		}
	}
	return out
}
