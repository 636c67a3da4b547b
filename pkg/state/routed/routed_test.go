package routed_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/resgraph/resgraph/conformance"
	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
	"github.com/resgraph/resgraph/pkg/state/routed"
)

// TestP1_BadRulesRefusedNamingThem: overlapping rules, a rule without a
// backend or namespace, no rule at all, and a namespace no rule covers are
// refused by New with a *RuleError of the invalid class that names the
// rules at fault.
func TestP1_BadRulesRefusedNamingThem(t *testing.T) {
	a, b := inmem.NewState(), inmem.NewState()
	for name, c := range map[string]struct {
		rules []routed.Rule
		opts  []routed.Option
		want  error
		names []string
	}{
		"same namespace twice":      {rules: []routed.Rule{routed.Exact("cfg", a), routed.Exact("cfg", b)}, want: routed.ErrOverlap, names: []string{`namespace "cfg"`}},
		"a name under a prefix":     {rules: []routed.Rule{routed.Prefix("sys.", a), routed.Exact("sys.net", b)}, want: routed.ErrOverlap, names: []string{`prefix "sys."`, `namespace "sys.net"`}},
		"a prefix of a prefix":      {rules: []routed.Rule{routed.Prefix("sys", a), routed.Prefix("sys.net", a)}, want: routed.ErrOverlap, names: []string{`prefix "sys"`, `prefix "sys.net"`}},
		"a catch-all and a rule":    {rules: []routed.Rule{routed.Exact("cfg", a), routed.Prefix("", b)}, want: routed.ErrOverlap, names: []string{`prefix ""`, `namespace "cfg"`}},
		"an uncovered namespace":    {rules: []routed.Rule{routed.Exact("cfg", a), routed.Prefix("sys.", b)}, opts: []routed.Option{routed.WithNamespaces("cfg", "runtime")}, want: routed.ErrUncovered, names: []string{`"runtime"`, `namespace "cfg"`, `prefix "sys."`}},
		"a rule without a backend":  {rules: []routed.Rule{routed.Exact("cfg", nil)}, want: routed.ErrBadRule, names: []string{`namespace "cfg"`}},
		"the empty namespace":       {rules: []routed.Rule{routed.Exact("", a)}, want: routed.ErrBadRule, names: []string{`namespace ""`}},
		"no rule and no default":    {want: routed.ErrBadRule},
		"a typed-nil default alone": {opts: []routed.Option{routed.WithDefault((*routed.State)(nil))}, want: routed.ErrBadRule},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := routed.New(c.rules, c.opts...)
			require.Error(t, err)
			assert.Nil(t, st)
			assert.ErrorIs(t, err, c.want)
			var re *routed.RuleError
			assert.ErrorAs(t, err, &re)
			assert.True(t, state.IsInvalidError(err), "rules are bad input: %v", err)
			for _, n := range c.names {
				assert.Contains(t, err.Error(), n)
			}
		})
	}
}

// TestP1_RulesThatDoNotOverlapAreAccepted: distinct names, prefixes that
// do not begin one another, a name outside every prefix, one backend for
// several rules, and a default.
func TestP1_RulesThatDoNotOverlapAreAccepted(t *testing.T) {
	a, b := inmem.NewState(), inmem.NewState()
	st, err := routed.New([]routed.Rule{
		routed.Exact("cfg", a), routed.Exact("identity", a), routed.Prefix("sys.", b), routed.Prefix("net.", a), routed.Exact("sys", b),
	}, routed.WithDefault(b), routed.WithNamespaces("cfg", "anything"))
	require.NoError(t, err)
	for ns, want := range map[resource.Namespace]state.State{"cfg": a, "identity": a, "sys.x": b, "net.": a, "sys": b, "other": b} {
		got, err := st.Backend(ns)
		require.NoError(t, err)
		assert.Same(t, want, got, ns)
	}
	assert.Len(t, st.Rules(), 5)
}

// TestP1_UncoveredNamespaceRefusedByEveryCall: without a default, a call
// on a namespace no rule covers is an invalid-class error naming the rules,
// and nothing is written anywhere; ValidateType refuses its kinds, so an
// Runtime refuses a controller that declares one at registration.
func TestP1_UncoveredNamespaceRefusedByEveryCall(t *testing.T) {
	ctx := t.Context()
	a := inmem.NewState()
	st, err := routed.New([]routed.Rule{routed.Exact("cfg", a)})
	require.NoError(t, err)
	r := conformance.NewIntResource("runtime", "x", 1)
	calls := map[string]error{
		"Create":       st.Create(ctx, r),
		"Modify":       st.Modify(ctx, r, func(resource.Resource) error { return nil }),
		"Destroy":      st.Destroy(ctx, r.Metadata()),
		"WatchKind":    st.WatchKind(ctx, resource.NewKind("runtime", conformance.IntResourceType), make(chan state.Event, 1)),
		"ValidateType": st.ValidateType(resource.NewKind("runtime", conformance.IntResourceType)),
	}
	_, calls["Get"] = st.Get(ctx, r.Metadata())
	_, calls["KindHead"] = st.KindHead(ctx, resource.NewKind("runtime", conformance.IntResourceType))
	for name, err := range calls {
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorContains(t, err, `no rule covers namespace "runtime"`, name)
		assert.ErrorContains(t, err, `namespace "cfg"`, name)
	}
	l, err := a.List(ctx, resource.NewKind("runtime", conformance.IntResourceType))
	require.NoError(t, err)
	assert.Empty(t, l.Items)

	rt, err := runtime.New(st, zaptest.NewLogger(t))
	require.NoError(t, err)
	err = rt.RegisterController(&conformance.WakeCounterController{
		ControllerName:   "uncovered",
		ControllerInputs: []controller.Input{{Namespace: "runtime", Type: conformance.IntResourceType, Kind: controller.InputWeak}},
	})
	require.Error(t, err, "a controller declaring a namespace no rule covers is refused at registration")
	assert.ErrorContains(t, err, `no rule covers namespace "runtime"`)
}

// TestP1_BadInputAnsweredByABackend: a nil or empty identity is refused
// with an invalid-class error, as by any state.
func TestP1_BadInputAnsweredByABackend(t *testing.T) {
	ctx := t.Context()
	st, err := routed.New([]routed.Rule{routed.Exact("cfg", inmem.NewState())})
	require.NoError(t, err)
	var nilMD *resource.Metadata
	_, err = st.Get(ctx, nil)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	_, err = st.Get(ctx, nilMD)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, state.IsInvalidError(st.Create(ctx, nil)))
	assert.True(t, state.IsInvalidError(st.Create(ctx, conformance.NewIntResource("", "x", 1))))
	_, err = st.List(ctx, nil)
	assert.True(t, state.IsInvalidError(err), "%v", err)
	assert.True(t, state.IsInvalidError(st.ValidateType(nil)))
}

// TestP1_OneBackendKeepsItsRevisions: over a single backend (whatever the
// rules), Revision and KindRevision are the backend's; over two they are
// unsupported.
func TestP1_OneBackendKeepsItsRevisions(t *testing.T) {
	ctx := t.Context()
	a := inmem.NewState()
	one, err := routed.New([]routed.Rule{routed.Exact("cfg", a), routed.Prefix("sys.", a)}, routed.WithDefault(a))
	require.NoError(t, err)
	require.NoError(t, one.Create(ctx, conformance.NewIntResource("cfg", "x", 1)))
	got, err := one.Revision(ctx)
	require.NoError(t, err)
	want, err := a.(state.RevisionReporter).Revision(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	two, err := routed.New([]routed.Rule{routed.Exact("cfg", a)}, routed.WithDefault(inmem.NewState()))
	require.NoError(t, err)
	_, err = two.Revision(ctx)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	_, _, err = two.KindRevision(ctx, resource.NewKind("cfg", conformance.IntResourceType))
	assert.ErrorIs(t, err, errors.ErrUnsupported)
}

// TestP1_KindHeadIsTheKindsBackends: KindHead answers with the bookmark
// of the kind's backend.
func TestP1_KindHeadIsTheKindsBackends(t *testing.T) {
	ctx := t.Context()
	a, b := inmem.NewState(), inmem.NewState()
	st, err := routed.New([]routed.Rule{routed.Exact("cfg", a)}, routed.WithDefault(b))
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("cfg", "x", 1)))
	k := resource.NewKind("cfg", conformance.IntResourceType)
	got, err := st.KindHead(ctx, k)
	require.NoError(t, err)
	want, err := a.(state.KindHeadReporter).KindHead(ctx, k)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestP1_FenceCheckedOnlyWhenEveryBackendChecksIt: in-memory backends do
// not check fences, so the routed state refuses them.
func TestP1_FenceCheckedOnlyWhenEveryBackendChecksIt(t *testing.T) {
	st, err := routed.New([]routed.Rule{routed.Exact("cfg", inmem.NewState())})
	require.NoError(t, err)
	err = st.CheckFence(testFence{})
	assert.True(t, state.IsInvalidError(err), "%v", err)
}

type testFence struct{}

func (testFence) String() string { return "a test fence" }

// TestP1_SnapshotChangeRaisedByItsBackend: a shared snapshot of one
// backend changed by its holder is found by that backend's detector, and
// raised by that backend's report, whether the holder checks it
// (CheckHanded, then ReportChange) or the backend finds it at the next
// write (SnapshotChanged, then ReportChange).
func TestP1_SnapshotChangeRaisedByItsBackend(t *testing.T) {
	ctx := t.Context()
	var reportsA, reportsB []error
	a := inmem.NewState(inmem.WithMutationDetector(func(err error) { reportsA = append(reportsA, err) }))
	b := inmem.NewState(inmem.WithMutationDetector(func(err error) { reportsB = append(reportsB, err) }))
	st, err := routed.New([]routed.Rule{routed.Exact("cfg", a)}, routed.WithDefault(b))
	require.NoError(t, err)
	require.True(t, st.TracksSnapshots())
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("cfg", "x", 1)))
	require.NoError(t, st.Create(ctx, conformance.NewIntResource("other", "y", 1)))

	h := &testHolder{}
	x, err := st.Get(ctx, resource.NewPointer("cfg", conformance.IntResourceType, "x"), state.WithReadOnlyGet())
	require.NoError(t, err)
	y, err := st.Get(ctx, resource.NewPointer("other", conformance.IntResourceType, "y"), state.WithReadOnlyGet())
	require.NoError(t, err)
	st.HandedTo(h, x, y)
	x.(*conformance.IntResource).TypedSpec().Value = 7 // the holder's mistake
	errs := st.CheckHanded(h, x, y)
	require.Len(t, errs, 1)
	var me *inmem.MutationError
	require.ErrorAs(t, errs[0], &me)
	assert.Equal(t, []string{"holder"}, me.Holders)
	st.ReportChange(errs[0])
	assert.Len(t, reportsA, 1, "raised by the backend that found it")
	assert.Empty(t, reportsB)

	y.(*conformance.IntResource).TypedSpec().Value = 7
	require.NoError(t, st.Modify(ctx, conformance.NewIntResource("other", "y", 0), func(r resource.Resource) error {
		r.(*conformance.IntResource).TypedSpec().Value = 8
		return nil
	}))
	require.Len(t, h.given, 1, "the backend gives the change it found to the holder")
	st.ReportChange(h.given[0])
	assert.Len(t, reportsB, 1)
	assert.Len(t, reportsA, 1)
}

// testHolder is a snapshot holder that takes on every change given.
type testHolder struct{ given []error }

func (*testHolder) HolderName() string { return "holder" }

func (h *testHolder) SnapshotChanged(err error) bool {
	h.given = append(h.given, err)
	return true
}
