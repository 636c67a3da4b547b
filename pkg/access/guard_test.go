package access_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/access"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestA3_EveryWriteAndDenialIsOneRecord: a write is one record with the
// identity, verb, resource, decision, rule and the version it wrote; a
// denial one with its reason; reads are sampled.
func TestA3_EveryWriteAndDenialIsOneRecord(t *testing.T) {
	ctx := testCtx(t)
	p, logs := policy(t, readerWriter())
	st := inmem.NewState()
	w := p.Guard(st, writer)
	l := newLink("network", "eth0", 1500)
	require.NoError(t, w.Create(ctx, l))
	l.TypedSpec().MTU = 9000
	require.NoError(t, w.Update(ctx, l))
	err := p.Guard(st, reader).Update(ctx, l)
	require.True(t, access.IsDeniedError(err))

	entries := logs.TakeAll()
	require.Len(t, entries, 3)
	for i, want := range []map[string]any{
		{"identity": "uid=1002", "peer": "uid=1002 gid=100 pid=0", "verb": "create", "namespace": "network", "type": linkType, "id": "eth0",
			"decision": "allowed", "rule": "role writer", "version": uint64(1)},
		{"verb": "update", "decision": "allowed", "rule": "role writer", "version": uint64(2)},
		{"identity": "uid=1001", "verb": "update", "decision": "denied", "rule": "default deny", "reason": err.Error()},
	} {
		assert.Equal(t, "access", entries[i].Message)
		fields := entries[i].ContextMap()
		for k, v := range want {
			assert.Equal(t, v, fields[k], "record %d field %s", i, k)
		}
	}

	// Reads: one record in every N with WithReadSampling(N).
	p3, logs3 := policy(t, readerWriter(), access.WithReadSampling(3))
	r := p3.Guard(st, reader)
	for range 9 {
		_, err := r.Get(ctx, l.Metadata())
		require.NoError(t, err)
	}
	assert.Equal(t, 3, logs3.Len())
	assert.Equal(t, "get", logs3.All()[0].ContextMap()["verb"])
}

// TestA3_FailedWritesAreAudited: an allowed write the state refuses is
// one record with the state's error.
func TestA3_FailedWritesAreAudited(t *testing.T) {
	ctx := testCtx(t)
	p, logs := policy(t, readerWriter())
	err := p.Guard(inmem.NewState(), writer).Update(ctx, newLink("network", "eth9", 1))
	require.True(t, state.IsNotFoundError(err))
	require.Equal(t, 1, logs.Len())
	assert.Equal(t, err.Error(), logs.All()[0].ContextMap()["error"])
}

// teardownRules grant one verb each (and get, to read before writing).
func teardownRules() access.Rules {
	grant := func(v access.Verb) []access.Grant {
		return []access.Grant{{Verbs: []access.Verb{access.Get, access.Watch, v}, Namespaces: []string{"*"}, Types: []string{"*"}}}
	}
	return access.Rules{
		Roles: []access.Role{{Name: "teardown", Grants: grant(access.Teardown)}, {Name: "update", Grants: grant(access.Update)},
			{Name: "destroy", Grants: grant(access.Destroy)}},
		Bindings: []access.Binding{{Role: "teardown", To: []access.Match{access.UID(1)}}, {Role: "update", To: []access.Match{access.UID(2)}},
			{Role: "destroy", To: []access.Match{access.UID(1)}}},
	}
}

// TestA7_TeardownIsItsOwnVerb: tearing down needs teardown, not update;
// an update that tears down and changes more needs both; finalizer edits
// of a tearing-down resource are updates.
func TestA7_TeardownIsItsOwnVerb(t *testing.T) {
	ctx := testCtx(t)
	p, logs := policy(t, teardownRules())
	st := inmem.NewState()
	td := p.Guard(st, access.Identity{Transport: access.UnixPeer, UID: 1})
	up := p.Guard(st, access.Identity{Transport: access.UnixPeer, UID: 2})
	for _, id := range []string{"a", "b", "c"} {
		require.NoError(t, st.Create(ctx, newLink("network", id, 1)))
	}
	ptr := func(id string) resource.Pointer { return resource.NewPointer("network", linkType, id) }

	_, err := up.Teardown(ctx, ptr("a"))
	assert.True(t, access.IsDeniedError(err), "update does not grant teardown: %v", err)
	assert.Contains(t, err.Error(), "granting teardown on")
	ready, err := td.Teardown(ctx, ptr("a"))
	require.NoError(t, err)
	assert.True(t, ready)
	assert.Equal(t, "teardown", logs.All()[logs.Len()-1].ContextMap()["verb"])

	// A teardown that changes the spec too needs update as well.
	got, err := st.Get(ctx, ptr("b"))
	require.NoError(t, err)
	changed := got.DeepCopy()
	changed.Metadata().SetPhase(resource.PhaseTearingDown)
	changed.(*link).TypedSpec().MTU = 42
	err = td.Update(ctx, changed, state.WithExpectedPhaseAny())
	assert.True(t, access.IsDeniedError(err), "%v", err)
	assert.Contains(t, err.Error(), "granting update on")
	cur, err := st.Get(ctx, ptr("b"))
	require.NoError(t, err)
	assert.Equal(t, resource.PhaseRunning, cur.Metadata().Phase(), "nothing written")

	// A finalizer edit of a resource already tearing down is an update.
	require.NoError(t, st.AddFinalizer(ctx, ptr("a"), "f"))
	err = td.RemoveFinalizer(ctx, ptr("a"), "f")
	assert.True(t, access.IsDeniedError(err), "%v", err)
	require.NoError(t, up.RemoveFinalizer(ctx, ptr("a"), "f"))
	require.NoError(t, td.TeardownAndDestroy(ctx, ptr("c")), "teardown, watch and destroy")
	_, err = st.Get(ctx, ptr("c"))
	assert.True(t, state.IsNotFoundError(err))
}

// TestA6_AllowedAccessAllocatesNothing: deciding an allowed access
// allocates nothing, so a guarded Get allocates what the state's Get does.
func TestA6_AllowedAccessAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	p, _ := policy(t, readerWriter(), access.WithReadSampling(0))
	st := inmem.NewState()
	require.NoError(t, st.Create(ctx, newLink("network", "eth0", 1500)))
	s := p.Subject(writer)
	decide := testing.AllocsPerRun(100, func() {
		if !s.Decide(ctx, access.Update, "network", linkType, "eth0").Allowed {
			t.Fatal("denied")
		}
	})
	assert.Zero(t, decide)
	guarded := s.Guard(st)
	assert.Same(t, guarded, s.Guard(st), "one guarded state per subject and state")
	ptr := resource.NewPointer("network", linkType, "eth0")
	plain := testing.AllocsPerRun(100, func() { _, _ = st.Get(ctx, ptr, state.WithReadOnlyGet()) })
	through := testing.AllocsPerRun(100, func() {
		if _, err := guarded.Get(ctx, ptr, state.WithReadOnlyGet()); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, plain, through)
}

// BenchmarkGet is a Get of the state itself; BenchmarkGuardedGet the same
// Get through the rules (allowed; reads not audited), for the closing
// note's figure of rule A6.
func BenchmarkGet(b *testing.B) { benchmarkGet(b, false) }

func BenchmarkGuardedGet(b *testing.B) { benchmarkGet(b, true) }

func benchmarkGet(b *testing.B, guard bool) {
	ctx := context.Background()
	var st state.State = inmem.NewState()
	if err := st.Create(ctx, newLink("network", "eth0", 1500)); err != nil {
		b.Fatal(err)
	}
	if guard {
		p, _ := policy(b, readerWriter(), access.WithReadSampling(0))
		st = p.Guard(st, reader)
	}
	ptr := resource.NewPointer("network", linkType, "eth0")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Get(ctx, ptr, state.WithReadOnlyGet()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGuard_ResumesKindWatchesAsItsState: a guarded state resumes kind
// watches when the state it guards does (state.KindWatchResumer), so the
// Runtime keeps no re-list memory over it; a whole-kind watch opened from
// a bookmark through the guard delivers exactly the changes after it. Over
// a state that does not resume, neither does the guard.
func TestGuard_ResumesKindWatchesAsItsState(t *testing.T) {
	ctx := testCtx(t)
	p, _ := policy(t, readerWriter())
	st := inmem.NewState()
	kind := resource.NewKind("network", linkType)
	require.True(t, state.ResumesKindWatches(st, kind))
	g := p.Guard(st, writer)
	assert.True(t, state.ResumesKindWatches(g, kind), "the guard resumes as inmem does")
	hidden := struct{ state.State }{st} // hides inmem's optional interfaces
	assert.False(t, state.ResumesKindWatches(p.Guard(hidden, writer), kind), "nor more than the state it guards")

	l := newLink("network", "eth0", 1500)
	require.NoError(t, g.Create(ctx, l))
	wctx, cancel := context.WithCancel(ctx)
	ch := make(chan []state.Event, 4)
	require.NoError(t, g.WatchKindAggregated(wctx, kind, ch, state.WithBootstrapContents(true)))
	var mark state.Bookmark
	for mark == nil {
		for _, ev := range <-ch {
			if ev.Type == state.Bootstrapped {
				mark = ev.Bookmark
			}
		}
	}
	cancel()
	l.TypedSpec().MTU = 9000
	require.NoError(t, g.Update(ctx, l))

	ch = make(chan []state.Event, 4)
	require.NoError(t, g.WatchKindAggregated(ctx, kind, ch, state.WithKindStartFromBookmark(mark)))
	b := <-ch
	require.Len(t, b, 1, "exactly the change after the bookmark")
	assert.Equal(t, state.Updated, b[0].Type)
	assert.Equal(t, 9000, b[0].Resource.(*link).TypedSpec().MTU)
}
