package recording_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/resgraph/resgraph/pkg/controller"
	"github.com/resgraph/resgraph/pkg/recording"
	"github.com/resgraph/resgraph/pkg/resource"
	"github.com/resgraph/resgraph/pkg/resource/typed"
	"github.com/resgraph/resgraph/pkg/runtime"
	"github.com/resgraph/resgraph/pkg/state"
	"github.com/resgraph/resgraph/pkg/state/inmem"
)

// TestRC1_StartingStateIsACut: a recorder started while writers write to
// two kinds gives a starting state and changes such that each change is
// the next version of its resource (none lost, none twice, none already
// in the starting state), and the starting state with the changes applied
// is the state.
func TestRC1_StartingStateIsACut(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	for i := range 50 {
		require.NoError(t, st.Create(ctx, newNote(fmt.Sprint("n", i), 0)))
	}
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind, echoKind))
	require.NoError(t, err)
	// The writers write before, while and after the recorder starts: until
	// stop is closed once it started.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprint("n", i%50)
				if w == 1 {
					e := typed.NewDefault[NoteSpec, EchoDef](id, NoteSpec{N: i})
					if err := st.Create(ctx, e); state.IsConflictError(err) {
						_, err = st.UpdateWithConflicts(ctx, e.Metadata(), func(r resource.Resource) error { r.(*Echo).TypedSpec().N = i; return nil })
						require.NoError(t, err)
					}
					continue
				}
				_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), id), func(r resource.Resource) error { r.(*Note).TypedSpec().N = i; return nil })
				require.NoError(t, err)
			}
		})
	}
	started(t, rec)
	for i := range 100 {
		_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "n0"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = -i; return nil })
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	r := settled(t, rec, st, echoKind, noteKind)
	versions := map[resource.PointerKey]uint64{}
	for _, res := range r.Initial {
		versions[resource.PointerOf(res.Metadata())] = res.Metadata().Version().Value()
	}
	var coalesced uint64
	for _, c := range r.Changes {
		key, v := c.Pointer, c.Version
		require.Greater(t, c.Revision, r.Revision, "a change after the starting state's revision")
		if c.Coalesced { // the recorder fell behind (S12): versions in between are not there
			require.Greater(t, v, versions[key]+1, "change %s", recording.ChangeText(r, &c))
			coalesced++
		} else {
			require.Equal(t, versions[key]+1, v, "change %s", recording.ChangeText(r, &c))
		}
		versions[key] = v
	}
	assert.Equal(t, coalesced, r.Coalesced, "RC6: the recording counts its coalesced changes")
	assert.NotEmpty(t, r.Changes)
}

// TestRC2_WhoMadeEachChange: creates and updates by a controller's name
// are the controller's, finalizer edits are a controller's — the
// finalizer's holder when it is named after a controller, even on
// another controller's output, else unnamed — everything else an
// outside writer's, and a noted world event is the world's.
func TestRC2_WhoMadeEachChange(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind, echoKind), recording.WithControllers("echoer", "cleaner"))
	require.NoError(t, err)
	started(t, rec)
	ptr := resource.NewPointer(ns, noteKind.Type(), "a")
	echo := resource.NewPointer(ns, echoKind.Type(), "a")
	require.NoError(t, st.Create(ctx, newNote("a", 1)))
	require.NoError(t, st.Create(ctx, typed.NewDefault[NoteSpec, EchoDef]("a", NoteSpec{N: 2}), state.WithCreateOwner("echoer")))
	require.NoError(t, st.AddFinalizer(ctx, ptr, "echoer"))
	require.NoError(t, st.AddFinalizer(ctx, echo, "cleaner"))
	require.NoError(t, st.AddFinalizer(ctx, echo, "someone/hold"))
	rec.Act("cable unplugged")
	_, err = st.Teardown(ctx, ptr)
	require.NoError(t, err)
	require.NoError(t, st.RemoveFinalizer(ctx, ptr, "echoer"))
	require.NoError(t, st.Destroy(ctx, ptr))
	r := settled(t, rec, st, echoKind, noteKind)
	var got []string
	for _, c := range r.Changes {
		got = append(got, fmt.Sprintf("%s %s %s", c.By, c.Writer, c.Op))
	}
	assert.Equal(t, []string{
		"outside  create", "controller echoer create", "controller echoer update",
		"controller cleaner update", "controller  update", "world  action",
		"outside  teardown", "controller echoer update", "outside  destroy",
	}, got)
	assert.Len(t, r.Outside(), 4)
}

// TestRC2_ARecorderOfNoControllerClassifiesEachUpdateByWhatItReplaced: a
// recorder that holds its changes as they came (no controller: rule RC3)
// classifies an update, when a recording is taken, against the version
// it replaced — the starting state's (a teardown of a resource listed at
// the start) or the change's before it (a change of finalizers alone is
// a holder's: rule C5), although its window keeps no version before a
// change.
func TestRC2_ARecorderOfNoControllerClassifiesEachUpdateByWhatItReplaced(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	a, b := resource.NewPointer(ns, noteKind.Type(), "a"), resource.NewPointer(ns, noteKind.Type(), "b")
	require.NoError(t, st.Create(ctx, newNote("a", 1)))
	require.NoError(t, st.AddFinalizer(ctx, a, "someone/hold"))
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind))
	require.NoError(t, err)
	started(t, rec)
	_, err = st.Teardown(ctx, a)
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, newNote("b", 1)))
	require.NoError(t, st.AddFinalizer(ctx, b, "someone/hold"))
	_, err = st.UpdateWithConflicts(ctx, b, func(r resource.Resource) error { r.(*Note).TypedSpec().N = 2; return nil })
	require.NoError(t, err)
	r := settled(t, rec, st, noteKind)
	var got []string
	for _, c := range r.Changes {
		got = append(got, fmt.Sprintf("%s %s %s %s", c.Pointer.ID(), c.By, c.Op, map[bool]string{true: "coalesced"}[c.Coalesced]))
	}
	assert.Equal(t, []string{"a outside teardown ", "b outside create ", "b controller update ", "b outside update "}, got)
}

// TestRC3_WindowIsBounded: a window of a few kilobytes keeps only the
// newest changes, the rest folded into its starting state, which stays
// the state as it was before them — whether the recorder classifies each
// change as it comes (a recorder of controllers) or when a recording is
// taken.
func TestRC3_WindowIsBounded(t *testing.T) {
	for _, controllers := range [][]string{nil, {"echoer"}} {
		t.Run(fmt.Sprintf("controllers=%v", controllers), func(t *testing.T) { windowIsBounded(t, controllers) })
	}
}

func windowIsBounded(t *testing.T, controllers []string) {
	st := inmem.NewState()
	ctx := context.Background()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind), recording.WithWindow(time.Hour, 4<<10), recording.WithControllers(controllers...))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("a", 0)))
	for i := 1; i <= 500; i++ {
		_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "a"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = i; return nil })
		require.NoError(t, err)
	}
	r := settled(t, rec, st, noteKind)
	if len(controllers) > 0 {
		// A lean window lists the state when its changes fill half of it:
		// a burst between two listings leaves at the next two.
		eventually(t, "the window let go of the burst", func() bool {
			r, err = rec.Take()
			return err == nil && len(r.Changes) < 100
		})
		_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "a"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = 501; return nil })
		require.NoError(t, err)
		r = settled(t, rec, st, noteKind)
	}
	assert.Less(t, len(r.Changes), 100, "a 4 KiB window keeps only the newest changes")
	require.Len(t, r.Initial, 1)
	first := r.Changes[0].Version
	assert.Equal(t, first-1, r.Initial[0].Metadata().Version().Value(), "the starting state is the state right before the first change kept")
	assert.Greater(t, r.Revision, uint64(1))
}

// TestRC5_SensitiveSpecsAreNeverPrinted: the text of a recording (and the
// debug page's) shows no spec of a sensitive kind (by its definition, or
// by WithSensitive), and its file holds it only inside the codec's bytes.
func TestRC5_SensitiveSpecsAreNeverPrinted(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	reg := registry(t)
	rec, err := recording.New(st, reg, recording.WithKinds(secretKind, noteKind, echoKind), recording.WithSensitive(echoKind.Type()))
	require.NoError(t, err)
	require.NoError(t, st.Create(ctx, typed.NewDefault[SecretSpec, SecretDef]("k1", SecretSpec{Key: "hunter2-initial"})))
	require.NoError(t, st.Create(ctx, typed.NewDefault[NoteSpec, EchoDef]("e1", NoteSpec{N: 31337})))
	started(t, rec)
	require.NoError(t, st.Create(ctx, typed.NewDefault[SecretSpec, SecretDef]("k2", SecretSpec{Key: "hunter2-changed"})))
	require.NoError(t, st.Create(ctx, newNote("visible", 42)))
	r := settled(t, rec, st, echoKind, noteKind, secretKind)
	var text bytes.Buffer
	require.NoError(t, recording.WriteText(&text, r))
	assert.NotContains(t, text.String(), "hunter2")
	assert.NotContains(t, text.String(), "31337")
	assert.Contains(t, text.String(), "<sensitive>")
	assert.Contains(t, text.String(), "{N:42}", "other specs are printed")

	srv := httptest.NewServer(rec.Handler())
	defer srv.Close()
	body := get(t, srv.URL+"/debug/recording?format=text")
	assert.NotContains(t, body, "hunter2")
	file := get(t, srv.URL+"/debug/recording")
	back, err := recording.Decode([]byte(file), reg)
	require.NoError(t, err)
	assert.Equal(t, "hunter2-changed", back.Changes[0].Resource.(*Secret).TypedSpec().Key, "the file keeps the codec's bytes")
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

// TestRC7_KeptOnAHotLoopAndOnFailures: a recorder of a Runtime keeps one
// recording when the Runtime flags a hot loop, writing it to its
// directory, and one when a controller's failures reach the threshold.
func TestRC7_KeptOnAHotLoopAndOnFailures(t *testing.T) {
	st := inmem.NewState()
	rt, err := runtime.New(st, nil)
	require.NoError(t, err)
	require.NoError(t, rt.RegisterController(pingPong[*Echo, *Note]{name: "ping", newO: func() *Note { return newNote("x", 0) }}))
	require.NoError(t, rt.RegisterController(pingPong[*Note, *Echo]{name: "pong", newO: func() *Echo {
		return typed.NewDefault[NoteSpec, EchoDef]("x", NoteSpec{})
	}}))
	require.NoError(t, rt.RegisterQController(&failing{}))
	dir := t.TempDir()
	reg := registry(t)
	rec, err := recording.New(st, reg, recording.WithRuntime(rt), recording.WithKeep(dir, 8), recording.WithFailureThreshold(1))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- rt.Run(ctx) }()
	started(t, rec)
	require.NoError(t, st.Create(ctx, typed.NewDefault[SecretSpec, SecretDef]("fails", SecretSpec{})))
	eventually(t, "a hot loop and the failures kept a recording each", func() bool {
		var loop, fail bool
		for _, k := range rec.Kept() {
			loop = loop || strings.HasPrefix(k.Recording.Reason, "hot loop: ")
			fail = fail || strings.HasPrefix(k.Recording.Reason, "failures: failing has 1 failing items")
		}
		return loop && fail
	})
	cancel()
	require.NoError(t, <-done)
	for _, k := range rec.Kept() {
		require.NoError(t, k.Err)
		back, err := recording.ReadFile(k.Path, reg)
		require.NoError(t, err)
		assert.Equal(t, k.Recording.Reason, back.Reason)
		assert.Equal(t, []string{"failing", "ping", "pong"}, back.Controllers)
	}
	var loops int
	for _, k := range rec.Kept() {
		if strings.HasPrefix(k.Recording.Reason, "hot loop: ") {
			loops++
		}
	}
	assert.Equal(t, 1, loops, "one recording per hot loop while it stays flagged")
}

// failing is a QController whose Reconcile always fails.
type failing struct{}

func (*failing) Name() string { return "failing" }
func (*failing) Settings() controller.QSettings {
	return controller.QSettings{Inputs: []controller.Input{{Namespace: ns, Type: secretKind.Type(), Kind: controller.InputQPrimary}}}
}
func (*failing) Reconcile(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) error {
	return fmt.Errorf("always")
}
func (*failing) MapInput(context.Context, *zap.Logger, controller.QRuntime, resource.Pointer) ([]resource.Pointer, error) {
	return nil, nil
}

// TestRecord_StartsNowAndCoversTheNextWhile: Record's recording starts
// at the call (what was before is its starting state) and holds every
// change of its duration, each the next version of its resource.
func TestRecord_StartsNowAndCoversTheNextWhile(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("before", 1)))
	settled(t, rec, st, noteKind)
	got := make(chan *recording.Recording, 1)
	go func() {
		r, err := rec.Record(ctx, 200*time.Millisecond)
		assert.NoError(t, err)
		got <- r
	}()
	require.NoError(t, st.Create(ctx, newNote("during", 0)))
	var r *recording.Recording
	for i := 1; r == nil; i++ {
		select {
		case r = <-got:
		default:
			_, err := st.UpdateWithConflicts(ctx, resource.NewPointer(ns, noteKind.Type(), "during"), func(r resource.Resource) error { r.(*Note).TypedSpec().N = i; return nil })
			require.NoError(t, err)
		}
	}
	require.NotEmpty(t, r.Changes)
	versions := map[string]uint64{}
	for _, res := range r.Initial {
		versions[res.Metadata().ID()] = res.Metadata().Version().Value()
	}
	assert.Contains(t, versions, "before")
	for _, c := range r.Changes {
		require.Equal(t, "during", c.Pointer.ID())
		v := c.Version
		if !c.Coalesced { // a hurried writer may outrun the recorder (S12)
			require.Equal(t, versions["during"]+1, v)
		}
		require.Greater(t, v, versions["during"])
		versions["during"] = v
	}
	assert.False(t, r.Requested.IsZero())
	assert.False(t, r.Start.Before(r.Requested))
}

// TestRecord_ARecordingThatStartsWhereAskedSaysNoLaterStart: a recorder
// of controllers over a state that numbers its changes (the lean window)
// starts Record's recording at the listing it takes at the call, and its
// Requested is that moment: a recording whose window kept its start does
// not claim to start later than asked (rule RC6 says so only when the
// window let go of the start).
func TestRecord_ARecordingThatStartsWhereAskedSaysNoLaterStart(t *testing.T) {
	st := inmem.NewState()
	ctx := context.Background()
	rec, err := recording.New(st, registry(t), recording.WithKinds(noteKind), recording.WithControllers("echoer"))
	require.NoError(t, err)
	started(t, rec)
	require.NoError(t, st.Create(ctx, newNote("before", 1)))
	settled(t, rec, st, noteKind)
	r, err := rec.Record(ctx, time.Millisecond)
	require.NoError(t, err)
	assert.False(t, r.Requested.IsZero())
	assert.True(t, r.Start.Equal(r.Requested), "start %v, requested %v", r.Start, r.Requested)
}
