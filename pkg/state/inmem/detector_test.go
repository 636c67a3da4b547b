package inmem

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/state"
)

// reports collects what a mutation detector reports.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) report(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

// take returns the reports so far as mutation errors and forgets them.
func (r *reports) take(t *testing.T) []*MutationError {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*MutationError
	for _, err := range r.errs {
		var me *MutationError
		require.ErrorAs(t, err, &me)
		out = append(out, me)
	}
	r.errs = nil
	return out
}

// detectorState returns a state whose detector reports into a reports.
func detectorState(t *testing.T, opts ...Option) (state.State, *reports) {
	t.Helper()
	rep := &reports{}
	st, _ := newTestState(t, append(opts, WithMutationDetector(rep.report))...)
	return st, rep
}

// TestS7_DetectorCatchesMutatedEvent: a watcher that changes an event's
// Resource is reported when the resource is next written, naming the
// resource, its version, the changed field and both values.
func TestS7_DetectorCatchesMutatedEvent(t *testing.T) {
	st, rep := detectorState(t)
	ctx := t.Context()
	ch := make(chan state.Event, 4)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	ev := recv(t, ch)
	ev.Resource.(*pair).TypedSpec().A = 100
	assert.Empty(t, rep.take(t), "nothing written yet")

	mustUpdate(t, ctx, st, "a", 2)
	got := rep.take(t)
	require.Len(t, got, 1)
	assert.Equal(t, resource.PointerString(ptr("a")), resource.PointerString(got[0].Resource))
	assert.Equal(t, uint64(1), got[0].Version.Value())
	assert.Equal(t, "spec.A", got[0].Path)
	assert.Equal(t, "1", got[0].Was)
	assert.Equal(t, "100", got[0].Now)
	assert.Contains(t, got[0].Error(), "Pairs.test.resgraph.dev(default/a)@1")
	assert.Contains(t, got[0].Error(), "DeepCopy")
}

// TestS7_DetectorCatchesMutatedReadOnlyReads: changes to the result of a
// read-only Get or List are reported when the resource is next written or
// destroyed; metadata changes too.
func TestS7_DetectorCatchesMutatedReadOnlyReads(t *testing.T) {
	st, rep := detectorState(t)
	ctx := t.Context()
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	require.NoError(t, st.Create(ctx, newPair("b", 1)))

	getRO(t, st, "a").Metadata().Labels().Set("k", "v")
	mustUpdate(t, ctx, st, "a", 2)
	got := rep.take(t)
	require.Len(t, got, 1)
	assert.Equal(t, "metadata.labels", got[0].Path)

	list, err := st.List(ctx, testKind, state.WithReadOnlyList())
	require.NoError(t, err)
	list.Items[1].(*pair).TypedSpec().B = 7
	require.NoError(t, st.Destroy(ctx, ptr("b")))
	got = rep.take(t)
	require.Len(t, got, 1)
	assert.Equal(t, "b", got[0].Resource.ID())
	assert.Equal(t, "spec.B", got[0].Path)

	// Changing a copying read is fine.
	c, err := st.Get(ctx, ptr("a"))
	require.NoError(t, err)
	c.(*pair).TypedSpec().A = 50
	mustUpdate(t, ctx, st, "a", 3)
	assert.Empty(t, rep.take(t))
}

// TestS7_DetectorCatchesMutatedOld: an event's Old (the version before
// the change) changed by a receiver is reported at the next write of the
// resource; an older version still in the history is reported at the
// latest when the change that replaced it leaves the history.
func TestS7_DetectorCatchesMutatedOld(t *testing.T) {
	st, rep := detectorState(t, WithHistoryCapacity(4))
	ctx := t.Context()
	ch := make(chan state.Event, 16)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))
	require.NoError(t, st.Create(ctx, newPair("a", 1)))
	mustUpdate(t, ctx, st, "a", 2)
	recv(t, ch)
	upd := recv(t, ch)
	require.Equal(t, state.Updated, upd.Type)
	upd.Old.(*pair).TypedSpec().A = -1 // version 1, already replaced

	mustUpdate(t, ctx, st, "a", 3)
	got := rep.take(t)
	require.Len(t, got, 1)
	assert.Equal(t, uint64(1), got[0].Version.Value())

	// Version 2 is changed after version 3 replaced it: the next writes of
	// a check it as "the one before", then it leaves the history.
	upd3 := recv(t, ch)
	upd3.Old.(*pair).TypedSpec().B = 9 // version 2
	mustUpdate(t, ctx, st, "a", 4)
	got = rep.take(t)
	require.NotEmpty(t, got)
	assert.Equal(t, uint64(2), got[0].Version.Value())

	// Writes to other resources push the changes out of the history: the
	// final check of each old version of a runs then.
	upd4 := recv(t, ch)
	upd4.Old.(*pair).TypedSpec().B = 10 // version 3
	for _, id := range []string{"x", "y", "z", "w", "v"} {
		require.NoError(t, st.Create(ctx, newPair(id, 0)))
	}
	var versions []uint64
	for _, me := range rep.take(t) {
		versions = append(versions, me.Version.Value())
	}
	assert.Contains(t, versions, uint64(3))
}

// TestS7_DetectorDefaultPanics: in a test binary the detector is on by
// default and its default report panics with the *MutationError, in the
// writer's goroutine, after the write is done; a nil report means the
// default.
func TestS7_DetectorDefaultPanics(t *testing.T) {
	t.Setenv(mutationEnv, "")
	for name, st := range map[string]state.State{
		"default":    NewState(),
		"nil report": NewState(WithMutationDetector(nil)),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			require.NoError(t, st.Create(ctx, newPair("a", 1)))
			getRO(t, st, "a").(*pair).TypedSpec().A = 100
			c, err := st.Get(ctx, ptr("a"))
			require.NoError(t, err)
			var me *MutationError
			func() {
				defer func() {
					err, _ := recover().(error)
					require.ErrorAs(t, err, &me)
				}()
				_ = st.Update(ctx, c)
			}()
			assert.Equal(t, "spec.A", me.Path)
			assert.Equal(t, uint64(2), version(getRO(t, st, "a")), "the write was done")
		})
	}
}

// TestS7_DetectorEnvironmentOverride: RESGRAPH_MUTATION_DETECTOR=0 turns
// the default off (even in a test binary), =1 on; WithMutationDetector
// turns it on whatever the environment says.
func TestS7_DetectorEnvironmentOverride(t *testing.T) {
	mutateAndWrite := func(st state.State) (panicked bool) {
		ctx := t.Context()
		require.NoError(t, st.Create(ctx, newPair("a", 1)))
		getRO(t, st, "a").(*pair).TypedSpec().A = 100
		defer func() { panicked = recover() != nil }()
		require.NoError(t, st.Destroy(ctx, ptr("a")))
		return false
	}
	t.Setenv(mutationEnv, "0")
	assert.False(t, mutateAndWrite(NewState()), "=0: off")
	rep := &reports{}
	mutateAndWrite(NewState(WithMutationDetector(rep.report)))
	assert.Len(t, rep.take(t), 1, "the option turns it on")
	t.Setenv(mutationEnv, "1")
	assert.True(t, mutateAndWrite(NewState()), "=1: on")
	detect, guard := checkDefault()
	assert.True(t, detect)
	assert.False(t, guard)
	t.Setenv(mutationEnv, "")
	detect, guard = checkDefault()
	assert.True(t, detect, "the detector in a test binary")
	assert.False(t, guard, "the guard outside test binaries only")
	t.Setenv(mutationEnv, "0")
	detect, guard = checkDefault()
	assert.False(t, detect || guard, "=0: neither")
}

// TestS7_DetectorQuietWithoutMutations: a workload that only reads what
// it shares reports nothing, whatever the kinds of writes and reads.
func TestS7_DetectorQuietWithoutMutations(t *testing.T) {
	st, rep := detectorState(t, WithHistoryCapacity(8))
	ctx := t.Context()
	ch := make(chan state.Event, 256)
	require.NoError(t, st.WatchKind(ctx, testKind, ch))
	r := newPair("a", 0)
	require.NoError(t, st.Create(ctx, r))
	for i := 1; i < 50; i++ {
		r.TypedSpec().A = i // the caller's own object
		require.NoError(t, st.Update(ctx, r))
		require.NoError(t, st.Modify(ctx, newPair("b", 0), func(res resource.Resource) error {
			res.(*pair).TypedSpec().A = i
			return nil
		}))
	}
	require.NoError(t, st.Destroy(ctx, ptr("a")))
	assert.Empty(t, rep.take(t))
	assert.NoError(t, errors.Join(rep.errs...))
}

// floatSpec is a spec whose values are equal without being identical.
type floatSpec struct{ F float64 }

type floatDef struct{}

func (floatDef) Definition() typed.Definition {
	return typed.Definition{Type: "Floats.test.resgraph.dev", DefaultNamespace: testNS}
}

// TestS7_DetectorReportsChangesOfValue: what the detector reports is a
// change of value (as reflect.DeepEqual sees it, NaN equal to NaN), not
// of bits: a snapshot whose 0 became -0 is not reported; one whose value
// changed is, once, however often it is checked.
func TestS7_DetectorReportsChangesOfValue(t *testing.T) {
	st, rep := detectorState(t)
	ctx := t.Context()
	r := typed.NewDefault[floatSpec, floatDef]("f", floatSpec{})
	require.NoError(t, st.Create(ctx, r))
	p := resource.NewPointer(testNS, "Floats.test.resgraph.dev", "f")
	snap, err := st.Get(ctx, p, state.WithReadOnlyGet())
	require.NoError(t, err)
	snap.(*typed.Resource[floatSpec, floatDef]).TypedSpec().F = math.Copysign(0, -1)
	require.NoError(t, st.Update(ctx, r))
	require.NoError(t, st.Update(ctx, r)) // checks it again, as the one before
	assert.Empty(t, rep.take(t), "-0 equals 0")

	snap, err = st.Get(ctx, p, state.WithReadOnlyGet())
	require.NoError(t, err)
	snap.(*typed.Resource[floatSpec, floatDef]).TypedSpec().F = 1
	require.NoError(t, st.Update(ctx, r))
	require.NoError(t, st.Update(ctx, r))
	got := rep.take(t)
	require.Len(t, got, 1, "reported once")
	assert.Equal(t, "spec.F", got[0].Path)
	assert.Equal(t, "0", got[0].Was)
	assert.Equal(t, "1", got[0].Now)
}

// secretSpec holds a secret: it redacts itself (resource.SpecRedacter).
type secretSpec struct{ User, Password string }

func (s secretSpec) RedactSpec() any {
	s.Password = "***"
	return s
}

type secretDef struct{}

func (secretDef) Definition() typed.Definition {
	return typed.Definition{Type: "Secrets.test.resgraph.dev", DefaultNamespace: testNS}
}

// TestS7_DetectorRedactsSecrets: the report of a changed snapshot whose
// spec redacts itself names the changed part, not its values.
func TestS7_DetectorRedactsSecrets(t *testing.T) {
	st, rep := detectorState(t)
	ctx := t.Context()
	r := typed.NewDefault[secretSpec, secretDef]("db", secretSpec{User: "admin", Password: "hunter2"})
	require.NoError(t, st.Create(ctx, r))
	snap, err := st.Get(ctx, resource.NewPointer(testNS, "Secrets.test.resgraph.dev", "db"), state.WithReadOnlyGet())
	require.NoError(t, err)
	snap.(*typed.Resource[secretSpec, secretDef]).TypedSpec().Password = "changed-secret"
	require.NoError(t, st.Update(ctx, r))
	got := rep.take(t)
	require.Len(t, got, 1)
	assert.Equal(t, "spec.Password", got[0].Path)
	assert.Equal(t, "<redacted>", got[0].Was)
	assert.Equal(t, "<redacted>", got[0].Now)
	assert.NotContains(t, got[0].Error(), "hunter2")
	assert.NotContains(t, got[0].Error(), "changed-secret")
}
