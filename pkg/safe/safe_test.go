package safe_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/safe"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type numSpec struct{ N int }

type numDef struct{}

func (numDef) Definition() typed.Definition {
	return typed.Definition{Type: "Nums.test.resgraph.dev", DefaultNamespace: "default"}
}

type num = typed.Resource[numSpec, numDef]

type strSpec struct{ S string }

type strDef struct{}

func (strDef) Definition() typed.Definition {
	return typed.Definition{Type: "Strs.test.resgraph.dev", DefaultNamespace: "default"}
}

type str = typed.Resource[strSpec, strDef]

func newNum(id string, n int) *num { return typed.NewDefault[numSpec, numDef](id, numSpec{N: n}) }
func newStr(id, s string) *str     { return typed.NewDefault[strSpec, strDef](id, strSpec{S: s}) }

var (
	numKind = resource.NewKind("default", "Nums.test.resgraph.dev")
	strKind = resource.NewKind("default", "Strs.test.resgraph.dev")
)

func numPtr(id string) resource.Pointer {
	return resource.NewPointer("default", "Nums.test.resgraph.dev", id)
}
func strPtr(id string) resource.Pointer {
	return resource.NewPointer("default", "Strs.test.resgraph.dev", id)
}

// stateWriter is a controller.Writer over a state, for testing the Writer
// helpers: it writes without owners and ignores the controller options
// except the expected phase.
type stateWriter struct{ st state.State }

func (w stateWriter) Create(ctx context.Context, r resource.Resource, _ ...controller.CreateOption) error {
	return w.st.Create(ctx, r)
}

func (w stateWriter) Update(ctx context.Context, r resource.Resource) error {
	return w.st.Update(ctx, r)
}

func (w stateWriter) modifyOptions(opts []controller.ModifyOption) []state.UpdateOption {
	o := controller.DefaultModifyOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if o.ExpectedPhase == nil {
		return []state.UpdateOption{state.WithExpectedPhaseAny()}
	}
	return []state.UpdateOption{state.WithExpectedPhase(*o.ExpectedPhase)}
}

func (w stateWriter) Modify(ctx context.Context, r resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) error {
	return w.st.Modify(ctx, r, fn, w.modifyOptions(opts)...)
}

func (w stateWriter) ModifyWithResult(ctx context.Context, r resource.Resource, fn func(resource.Resource) error, opts ...controller.ModifyOption) (resource.Resource, error) {
	return w.st.ModifyWithResult(ctx, r, fn, w.modifyOptions(opts)...)
}

func (w stateWriter) Teardown(ctx context.Context, ptr resource.Pointer, _ ...controller.RemoveOption) (bool, error) {
	return w.st.Teardown(ctx, ptr)
}

func (w stateWriter) Destroy(ctx context.Context, ptr resource.Pointer, _ ...controller.RemoveOption) error {
	return w.st.Destroy(ctx, ptr)
}

func (w stateWriter) AddFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	return w.st.AddFinalizer(ctx, ptr, fins...)
}

func (w stateWriter) RemoveFinalizer(ctx context.Context, ptr resource.Pointer, fins ...resource.Finalizer) error {
	return w.st.RemoveFinalizer(ctx, ptr, fins...)
}

var (
	_ controller.Reader = state.State(nil)
	_ controller.Writer = stateWriter{}
)

// setup returns a state holding nums a (1) and b (2) and str s.
func setup(t *testing.T) (context.Context, state.State) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	st := inmem.NewState()
	require.NoError(t, st.Create(ctx, newNum("b", 2)))
	require.NoError(t, st.Create(ctx, newNum("a", 1)))
	require.NoError(t, st.Create(ctx, newStr("s", "x")))
	return ctx, st
}

func values(l safe.List[*num]) []int {
	var out []int
	for r := range l.All() {
		out = append(out, r.TypedSpec().N)
	}
	return out
}

func TestGet(t *testing.T) {
	ctx, st := setup(t)

	n, err := safe.StateGet[*num](ctx, st, numPtr("a"))
	require.NoError(t, err)
	assert.Equal(t, 1, n.TypedSpec().N)
	n, err = safe.ReaderGet[*num](ctx, st, numPtr("b"))
	require.NoError(t, err)
	assert.Equal(t, 2, n.TypedSpec().N)

	_, err = safe.StateGet[*num](ctx, st, numPtr("missing"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)
	_, err = safe.ReaderGet[*num](ctx, st, numPtr("missing"))
	assert.True(t, state.IsNotFoundError(err), "%v", err)

	n, err = safe.StateGet[*num](ctx, st, strPtr("s"))
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	assert.ErrorContains(t, err, "Strs.test.resgraph.dev(default/s)", "the error names the resource")
	assert.True(t, state.IsInvalidError(err), "a wrong type is an invalid-class error: %v", err)
	assert.Nil(t, n)
	_, err = safe.ReaderGet[*num](ctx, st, strPtr("s"))
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
}

func TestList(t *testing.T) {
	ctx, st := setup(t)

	l, err := safe.StateList[*num](ctx, st, numKind)
	require.NoError(t, err)
	require.Equal(t, 2, l.Len())
	assert.Equal(t, "a", l.Get(0).Metadata().ID())
	assert.Equal(t, "b", l.Get(1).Metadata().ID())
	assert.Equal(t, []int{1, 2}, values(l))

	l, err = safe.ReaderList[*num](ctx, st, numKind, state.WithIDQuery(resource.IDRegexpMatch(nil)))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, values(l))

	l, err = safe.StateListAll[*num](ctx, st)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, values(l))

	l, err = safe.ReaderListAll[*num](ctx, st, state.WithLabelQuery(resource.LabelExists("none")))
	require.NoError(t, err)
	assert.Equal(t, 0, l.Len())

	strs, err := safe.ReaderListAll[*str](ctx, st)
	require.NoError(t, err)
	require.Equal(t, 1, strs.Len())
	assert.Equal(t, "x", strs.Get(0).TypedSpec().S)

	_, err = safe.StateList[*num](ctx, st, strKind)
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	_, err = safe.ReaderList[*num](ctx, st, strKind)
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)

	_, err = safe.StateList[*num](ctx, st, resource.NewKind("", "t"))
	assert.True(t, state.IsInvalidError(err), "%v", err)

	// All stops when the consumer does.
	l, err = safe.StateListAll[*num](ctx, st)
	require.NoError(t, err)
	var first []string
	for r := range l.All() {
		first = append(first, r.Metadata().ID())
		break
	}
	assert.Equal(t, []string{"a"}, first)

	var zero safe.List[*num]
	assert.Equal(t, 0, zero.Len())
	assert.Empty(t, slices.Collect(zero.All()))
}

func TestNewList(t *testing.T) {
	l, err := safe.NewList[*num](resource.List{Items: []resource.Resource{newNum("a", 1), newStr("s", "x")}})
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	assert.Equal(t, 0, l.Len())
	_, err = safe.NewList[*num](resource.List{Items: []resource.Resource{nil}})
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
}

func incr(r *num) error {
	r.TypedSpec().N++
	return nil
}

func TestModify(t *testing.T) {
	ctx, st := setup(t)
	w := stateWriter{st}

	require.NoError(t, safe.StateModify(ctx, st, newNum("a", 0), incr))
	require.NoError(t, safe.WriterModify(ctx, w, newNum("a", 0), incr))
	r, err := safe.StateModifyWithResult(ctx, st, newNum("a", 0), incr)
	require.NoError(t, err)
	assert.Equal(t, 4, r.TypedSpec().N)
	r, err = safe.WriterModifyWithResult(ctx, w, newNum("a", 0), incr)
	require.NoError(t, err)
	assert.Equal(t, 5, r.TypedSpec().N)
	assert.Equal(t, uint64(5), r.Metadata().Version().Value())
	r, err = safe.StateUpdateWithConflicts(ctx, st, numPtr("a"), incr)
	require.NoError(t, err)
	assert.Equal(t, 6, r.TypedSpec().N)

	r, err = safe.WriterModifyWithResult(ctx, w, newNum("new", 0), incr)
	require.NoError(t, err)
	assert.Equal(t, 1, r.TypedSpec().N, "created")

	boom := errors.New("boom")
	fail := func(*num) error { return boom }
	assert.ErrorIs(t, safe.StateModify(ctx, st, newNum("a", 0), fail), boom)
	assert.ErrorIs(t, safe.WriterModify(ctx, w, newNum("a", 0), fail), boom)
	_, err = safe.StateModifyWithResult(ctx, st, newNum("a", 0), fail)
	assert.ErrorIs(t, err, boom)
	_, err = safe.WriterModifyWithResult(ctx, w, newNum("a", 0), fail)
	assert.ErrorIs(t, err, boom)
	_, err = safe.StateUpdateWithConflicts(ctx, st, numPtr("a"), fail)
	assert.ErrorIs(t, err, boom)

	assert.True(t, state.IsInvalidError(safe.StateModify(ctx, st, newNum("a", 0), nil)))
	assert.True(t, state.IsInvalidError(safe.WriterModify(ctx, w, newNum("a", 0), nil)))
	_, err = safe.StateModifyWithResult(ctx, st, newNum("a", 0), nil)
	assert.True(t, state.IsInvalidError(err))
	_, err = safe.WriterModifyWithResult(ctx, w, newNum("a", 0), nil)
	assert.True(t, state.IsInvalidError(err))
	_, err = safe.StateUpdateWithConflicts[*num](ctx, st, numPtr("a"), nil)
	assert.True(t, state.IsInvalidError(err))
	assert.True(t, state.IsInvalidError(safe.StateModify(ctx, st, (*num)(nil), incr)), "typed nil resource")

	got, err := safe.StateGet[*num](ctx, st, numPtr("a"))
	require.NoError(t, err)
	assert.Equal(t, 6, got.TypedSpec().N, "failed modifications wrote nothing")
	assert.Equal(t, uint64(6), got.Metadata().Version().Value())
}

func TestModifyWrongType(t *testing.T) {
	ctx, st := setup(t)
	// A str stored where a num is expected: the num function is not called.
	require.NoError(t, st.Create(ctx, typed.New[strSpec, strDef](resource.NewMetadata("default", "Nums.test.resgraph.dev", "imposter", resource.VersionUndefined), strSpec{})))
	called := false
	fn := func(*num) error {
		called = true
		return nil
	}
	err := safe.StateModify(ctx, st, newNum("imposter", 0), fn)
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	err = safe.WriterModify(ctx, stateWriter{st}, newNum("imposter", 0), fn)
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	_, err = safe.StateUpdateWithConflicts(ctx, st, numPtr("imposter"), fn)
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	_, err = safe.StateWatchFor[*num](ctx, st, numPtr("imposter"))
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
	assert.False(t, called)
	_, err = safe.StateGet[*num](ctx, st, numPtr("imposter"))
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
}

func TestStateWatchFor(t *testing.T) {
	ctx, st := setup(t)
	r, err := safe.StateWatchFor[*num](ctx, st, numPtr("a"), state.WithCondition(func(r resource.Resource) (bool, error) { return true, nil }))
	require.NoError(t, err)
	assert.Equal(t, 1, r.TypedSpec().N)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = safe.StateWatchFor[*num](cctx, st, numPtr("a"), state.WithPhases(resource.PhaseTearingDown))
	assert.ErrorIs(t, err, context.Canceled)
}

func recv[T resource.Resource](ctx context.Context, t *testing.T, ch <-chan safe.WrappedStateEvent[T]) safe.WrappedStateEvent[T] {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-ctx.Done():
		t.Fatal("timed out waiting for an event")
		return safe.WrappedStateEvent[T]{}
	}
}

func TestStateWatchKind(t *testing.T) {
	ctx, st := setup(t)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan safe.WrappedStateEvent[*num])
	require.NoError(t, safe.StateWatchKind(wctx, st, numKind, ch, state.WithBootstrapContents(true)))

	for _, want := range []int{1, 2} {
		ev := recv(ctx, t, ch)
		require.Equal(t, state.Created, ev.Type())
		r, err := ev.Resource()
		require.NoError(t, err)
		assert.Equal(t, want, r.TypedSpec().N)
		_, err = ev.Old()
		assert.ErrorIs(t, err, safe.ErrNoResource)
		assert.NoError(t, ev.Error())
	}
	ev := recv(ctx, t, ch)
	require.Equal(t, state.Bootstrapped, ev.Type())
	_, err := ev.Resource()
	assert.ErrorIs(t, err, safe.ErrNoResource)
	assert.NotEmpty(t, ev.Bookmark())

	_, err = safe.StateUpdateWithConflicts(ctx, st, numPtr("a"), incr)
	require.NoError(t, err)
	ev = recv(ctx, t, ch)
	require.Equal(t, state.Updated, ev.Type())
	r, err := ev.Resource()
	require.NoError(t, err)
	old, err := ev.Old()
	require.NoError(t, err)
	assert.Equal(t, 2, r.TypedSpec().N)
	assert.Equal(t, 1, old.TypedSpec().N)
	assert.Equal(t, state.Updated, ev.Event().Type)

	// A stalled consumer blocks no writer and gets the final state.
	for range 300 {
		_, err = safe.StateUpdateWithConflicts(ctx, st, numPtr("b"), incr)
		require.NoError(t, err)
	}
	for {
		ev = recv(ctx, t, ch)
		r, err = ev.Resource()
		require.NoError(t, err)
		if r.Metadata().ID() == "b" && r.TypedSpec().N == 302 {
			break
		}
	}

	cancel()
	// After cancel the conversion goroutine exits (goleak checks) and sends
	// nothing more, even for new changes.
	_, err = safe.StateUpdateWithConflicts(ctx, st, numPtr("a"), incr)
	require.NoError(t, err)
}

func TestStateWatchKindWrongType(t *testing.T) {
	ctx, st := setup(t)
	ch := make(chan safe.WrappedStateEvent[*num], 4)
	require.NoError(t, safe.StateWatchKind(ctx, st, strKind, ch, state.WithBootstrapContents(true)))
	ev := recv(ctx, t, ch)
	require.Equal(t, state.Created, ev.Type())
	_, err := ev.Resource()
	assert.ErrorIs(t, err, safe.ErrTypeMismatch)
}

func TestStateWatchKindErrors(t *testing.T) {
	ctx, st := setup(t)
	err := safe.StateWatchKind[*num](ctx, st, numKind, nil)
	assert.True(t, state.IsInvalidError(err), "nil channel: %v", err)
	err = safe.StateWatchKind(ctx, st, resource.NewKind("", "t"), make(chan safe.WrappedStateEvent[*num]))
	assert.True(t, state.IsInvalidError(err), "empty namespace: %v", err)
	err = safe.StateWatchKind(ctx, st, numKind, make(chan safe.WrappedStateEvent[*num]), state.WithKindStartFromBookmark(state.Bookmark("bad")))
	assert.Error(t, err, "bad bookmark")
}

// erroringCore is a state whose kind watches fail at once.
type erroringCore struct {
	state.State
	err error
}

func (c erroringCore) WatchKind(ctx context.Context, _ resource.Kind, ch chan<- state.Event, _ ...state.WatchKindOption) error {
	go func() {
		select {
		case ch <- state.Event{Type: state.Errored, Error: c.err}:
		case <-ctx.Done():
		}
	}()
	return nil
}

func TestStateWatchKindErrored(t *testing.T) {
	ctx, st := setup(t)
	boom := errors.New("boom")
	ch := make(chan safe.WrappedStateEvent[*num])
	require.NoError(t, safe.StateWatchKind(ctx, erroringCore{st, boom}, numKind, ch))
	ev := recv(ctx, t, ch)
	assert.Equal(t, state.Errored, ev.Type())
	assert.ErrorIs(t, ev.Error(), boom)
	_, err := ev.Resource()
	assert.ErrorIs(t, err, safe.ErrNoResource)
}

// closingCore is a state whose kind watches send the current contents and
// then close their stream: a broken backend.
type closingCore struct{ state.State }

func (c closingCore) WatchKind(ctx context.Context, k resource.Kind, ch chan<- state.Event, _ ...state.WatchKindOption) error {
	l, err := c.List(ctx, k)
	if err != nil {
		return err
	}
	go func() {
		for _, r := range l.Items {
			select {
			case ch <- state.Event{Type: state.Created, Resource: r}:
			case <-ctx.Done():
				return
			}
		}
		close(ch)
	}()
	return nil
}

// TestStateWatchKindClosedStream: a stream the state closes while the
// watch's context is live ends the watch with one Errored event wrapping
// state.ErrWatchClosed, then nothing (issue 14: the conversion goroutine
// forwarded zero events from the closed channel in a busy loop).
func TestStateWatchKindClosedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, st := setup(t)
		ch := make(chan safe.WrappedStateEvent[*num], 16)
		require.NoError(t, safe.StateWatchKind(ctx, closingCore{st}, numKind, ch))
		synctest.Wait()
		require.Len(t, ch, 3, "a, b, then the failure; nothing more")
		for range 2 {
			assert.Equal(t, state.Created, (<-ch).Type())
		}
		ev := <-ch
		assert.Equal(t, state.Errored, ev.Type())
		assert.ErrorIs(t, ev.Error(), state.ErrWatchClosed)
		assert.EqualError(t, ev.Error(), "watch Nums.test.resgraph.dev(default): watch stream closed by the state")
	})
}

// TestNilStateReaderWriterIsInvalid: every helper given a nil state,
// reader or writer (or one holding a nil pointer) fails with an
// invalid-class error naming the helper, never a panic (issue 14:
// safe.StateGet with a nil state panicked); nil options are skipped.
func TestNilStateReaderWriterIsInvalid(t *testing.T) {
	ctx := t.Context()
	var nilState state.State
	var typedNil *stateWriter
	incr := func(*num) error { return nil }
	for name, call := range map[string]func() error{
		"StateGet":  func() error { _, err := safe.StateGet[*num](ctx, nilState, numPtr("a")); return err },
		"StateList": func() error { _, err := safe.StateList[*num](ctx, nilState, numKind); return err },
		"StateListAll": func() error {
			_, err := safe.StateListAll[*num](ctx, nilState)
			return err
		},
		"StateModify": func() error { return safe.StateModify(ctx, nilState, newNum("a", 0), incr) },
		"StateModifyWithResult": func() error {
			_, err := safe.StateModifyWithResult(ctx, nilState, newNum("a", 0), incr)
			return err
		},
		"StateUpdateWithConflicts": func() error {
			_, err := safe.StateUpdateWithConflicts(ctx, nilState, numPtr("a"), incr)
			return err
		},
		"StateWatchFor": func() error { _, err := safe.StateWatchFor[*num](ctx, nilState, numPtr("a")); return err },
		"StateWatchKind": func() error {
			return safe.StateWatchKind(ctx, nilState, numKind, make(chan safe.WrappedStateEvent[*num]))
		},
		"ReaderGet":  func() error { _, err := safe.ReaderGet[*num](ctx, nil, numPtr("a")); return err },
		"ReaderList": func() error { _, err := safe.ReaderList[*num](ctx, nil, numKind); return err },
		"ReaderListAll": func() error {
			_, err := safe.ReaderListAll[*num](ctx, nil)
			return err
		},
		"WriterModify": func() error { return safe.WriterModify(ctx, typedNil, newNum("a", 0), incr) },
		"WriterModifyWithResult": func() error {
			_, err := safe.WriterModifyWithResult(ctx, nil, newNum("a", 0), incr)
			return err
		},
	} {
		err := call()
		assert.True(t, state.IsInvalidError(err), "%s: %v", name, err)
		assert.ErrorContains(t, err, "safe."+name+": nil ", name)
	}

	ctx2, st := setup(t)
	n, err := safe.StateGet[*num](ctx2, st, numPtr("a"), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, n.TypedSpec().N)
	l, err := safe.StateList[*num](ctx2, st, numKind, nil, state.WithLabelQuery(nil))
	require.NoError(t, err)
	assert.Equal(t, 2, l.Len())
}
